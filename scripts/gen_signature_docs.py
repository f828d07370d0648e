"""Generate docs/signatures.md from lazarus/detection/signatures.yaml.

    .venv/bin/python scripts/gen_signature_docs.py          # rewrite the file
    .venv/bin/python scripts/gen_signature_docs.py --check  # exit 1 if it is out of date

tests/detection/test_signature_docs.py runs the check, so an edit to the
catalogue without regenerating the reference fails the suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lazarus.detection.catalogue import Catalogue, Role, Signature, XidMeaning, default_catalogue
from lazarus.health.xid import XidClass, classify_xid

TARGET = Path(__file__).resolve().parent.parent / "docs" / "signatures.md"

HEADER = """\
# Signature catalogue reference

Generated from `lazarus/detection/signatures.yaml` by `scripts/gen_signature_docs.py`;
do not edit by hand. How to add an entry: [adding-a-signature.md](adding-a-signature.md).

The first signature (in the order below) whose keyword and pattern occur in a
line claims that line. **Roles**: `root` can be a failure's cause; `victim` is a
symptom of a failure elsewhere and never blames its node; `advisory` is a health
warning reported in the notes, never a failure; `benign` is known noise that
claims a line so nothing else can match it. Among the roots of one failure the
highest severity wins, then the earliest timestamp. **Advice**:
`retry_excluding_nodes` restarts without the implicated nodes, `retry_same_nodes`
restarts as is, `stop` does not restart.

A line is matched whole even when it was printed over several: a hit line is
joined with the indented lines that continue it (a wrapped kernel message, a
chained error) and with a next line that goes on in lower case after a long line
cut by a terminal or a web page, mid-word (`collectiv` + `e operation timeout`)
or at a word boundary that kept its trailing space (`collective ` + `operation
timeout`); `lazarus/detection/reader.py`.

Two answers of `lazarus diagnose` (a finished file) come from no root: an
advisory marked *answers a finished file* (a report with its own measure: a
stall inspector's "more than 60 seconds", a GPU's clocks-event reason) is the
answer when nothing else is found, a hang only when it is the file's last word
(`lazarus/detection/finished.py`; a live job keeps it a note); and a file whose
own progress reports became at least three times slower and stayed so is a
straggler of unknown cause (`progress_slowdown`, `lazarus/detection/slowdown.py`).
"""

XID_INTRO = """\
One table for every NVIDIA Xid Lazarus knows: the log attribution reads the
kernel line through the signature named here, and the node agent derives its
class from the same entry (`lazarus/health/xid.py`). **NVIDIA bucket** is the
immediate action of NVIDIA's
[Xid catalogue](https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html).
**Node**: `exclude` restarts the job without the node (the agent fails it);
`watch` keeps the node but blames it (the agent marks it degraded); `keep` does
not blame it; for Xid 154 the recovery action in the message (NVML's recovery
action, for the agent) decides.

Every written form of an Xid report is read through the same entry: a bare
`Xid 149, ...` (as NVIDIA's catalogue, DCGM and health reports write it) is put
in the driver's `NVRM: Xid (?): 149, ...` form before matching, and an Xid 45
that names its cause (`... caused by previous Xid 149`) is read as that cause,
since Xid 45 is only the cleanup after another error
(`lazarus/detection/normalize.py`, `canonical_xid`).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _summary_table(catalogue: Catalogue) -> list[str]:
    lines = ["| id | role | kind | category | advice | severity |", "|---|---|---|---|---|---|"]
    for sig in catalogue.signatures:
        advice = sig.retry_advice.value if sig.retry_advice else "-"
        kind = sig.failure_kind.value if sig.role in (Role.ROOT, Role.VICTIM) else "-"
        lines.append(
            f"| [`{sig.id}`](#{sig.id}) | {sig.role.value} | {kind} | {sig.category.value} | {advice} "
            f"| {sig.severity} |"
        )
    return lines


_NODE = {XidClass.FATAL: "exclude", XidClass.DEGRADING: "watch", XidClass.NO_NODE_FAULT: "keep",
         XidClass.RECOVERY_ACTION: "the reported recovery action"}  # fmt: skip


def _xid_row(meaning: XidMeaning, code: str) -> str:
    bucket = meaning.bucket.value if meaning.bucket else "-"
    advice = meaning.retry_advice.value if meaning.retry_advice else "-"
    sig, blames = meaning.signature, "yes" if meaning.blames_node else "no"
    return (
        f"| {code} | {_cell(meaning.name or 'not listed')} | {bucket} | [`{sig}`](#{sig}) "
        f"| {meaning.category.value} | {advice} | {blames} | {_NODE[classify_xid(meaning.code)]} |"
    )


def _xid_table(catalogue: Catalogue) -> list[str]:
    lines = ["| Xid | meaning | NVIDIA bucket | signature | category | advice | blames node | node |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    lines += [_xid_row(catalogue.xid(code), str(code)) for code in catalogue.xid_codes]
    if catalogue.unlisted_xid is not None:
        unlisted = next(code for code in range(1 << 16) if code not in catalogue.xid_codes)
        lines.append(_xid_row(catalogue.xid(unlisted), "any other"))
    return lines


def _entry(sig: Signature) -> list[str]:
    lines = [f"### {sig.id}", "", f"**{_cell(sig.title)}** (family `{sig.family}`)", "", sig.explanation, ""]
    facts = [
        ("role", sig.role.value),
        ("failure kind", sig.failure_kind.value),
        ("category", sig.category.value),
        ("retry advice", sig.retry_advice.value if sig.retry_advice else "none"),
        ("node locator", sig.locator.value),
        ("blames its node", "yes" if sig.blames_node else "no"),
        ("severity", str(sig.severity)),
        ("confidence", f"{sig.confidence:.2f}"),
        ("lines needed", str(sig.min_count)),
        *([("answers a finished file", "yes (lazarus diagnose only)")] if sig.answers_a_finished_file else []),
        *(
            [("Xid codes (NVIDIA bucket)", ", ".join(f"{x.code} ({x.bucket.value})" for x in sig.xids))]
            if sig.xids
            else []
        ),
        ("keywords", ", ".join(f"`{_cell(k)}`" for k in sig.keywords)),
        ("reference", sig.doc),
    ]
    lines += ["| | |", "|---|---|"] + [f"| {name} | {value} |" for name, value in facts]
    lines += ["", "Patterns:", ""] + [f"- `{_cell(p)}`" for p in sig.patterns]
    lines += ["", "Example:", "", "```text", *sig.examples, "```", ""]
    return lines


def render(catalogue: Catalogue | None = None) -> str:
    catalogue = catalogue or default_catalogue()
    families = sorted({sig.family for sig in catalogue.signatures})
    lines = [
        HEADER,
        f"{len(catalogue.signatures)} signatures in {len(families)} families.",
        "",
        "## Summary",
        "",
        *_summary_table(catalogue),
        "",
        "## Xid codes",
        "",
        XID_INTRO,
        *_xid_table(catalogue),
        "",
        "## Signatures",
        "",
    ]
    for sig in catalogue.signatures:
        lines += _entry(sig)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description="Generate docs/signatures.md from the signature catalogue.")
    parser.add_argument("--check", action="store_true", help="only check that the file is up to date")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date; run scripts/gen_signature_docs.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
