"""What a person can tell from the excerpt alone: a blind labelling baseline for issue 9's corpus.

Issue 9 scores ``lazarus diagnose`` against labels taken from each public
thread's *resolution*: what the people in the thread found after reading far
more than the quoted lines (the hardware they swapped, the setting they
changed, the version they upgraded). Part of that answer is not in the excerpt
at all. This script measures how much, by asking readers who see only the
excerpt's text to label it under the same contract, blind to the source, its
title, its id, the label and the rationale:

``export``
    writes the excerpts of one set as anonymous questions (``q001`` ...), in
    batches for several readers, each batch overlapping the next by a few
    questions so that two readers answer those independently. The order and the
    names are a deterministic function of the excerpts (sha256 of their ids), so
    no key file is written: ``score`` recomputes it. ``questions.yaml`` holds a
    digest of each question's text, which says nothing of its label; kept beside
    the answers, it makes ``score`` refuse answers to a corpus that has changed.

``score``
    reads the readers' answers and prints, on the same excerpts, the readers'
    accuracy against the thread labels, the engine's accuracy, and how often two
    readers agree with each other (on the overlap). A reader's accuracy is an
    estimate of what any reader of the text alone can reach: a ceiling for the
    log reader that is not fitted on the set itself (``diagnosis_bounds.py``'s
    per-signature ceiling is).

Commands::

    .venv/bin/python benchmarks/blind_baseline.py export --split scored --out /tmp/blind --batches 6 --overlap 15
    .venv/bin/python benchmarks/blind_baseline.py score --split scored --answers benchmarks/blind_baseline/scored

An answer file is YAML, a list of ``{q, failure_kind, category, retry_advice}``;
a question answered twice in one file keeps its last answer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from diagnosis_accuracy import FIELDS, Example, real_examples, run

KINDS = ("crash", "hang", "straggler", "none")
CATEGORIES = ("hardware", "system_software", "infrastructure", "application", "unknown")
ADVICE = ("retry_same_nodes", "retry_excluding_nodes", "stop", None)
QUESTIONS = "questions.yaml"
"""Written by ``export`` beside the batches and kept beside the answers: question -> digest of its text."""


SPLITS = ("pool", "scored", "heldout")
"""``pool``: the tuning pool (``real_corpus/``, dev and the retired test split); ``scored``: the fourth frozen set
(read, not tuned on); ``heldout``: the fifth frozen set (aggregate scores only)."""


def examples_of(split: str) -> list[Example]:
    return real_examples("dev") + real_examples("test") if split == "pool" else real_examples(split)


def questions(examples: list[Example]) -> list[tuple[str, Example]]:
    """The excerpts in a fixed order that says nothing of their label, each with an anonymous name."""
    ordered = sorted(examples, key=lambda e: hashlib.sha256(e.id.encode()).hexdigest())
    width = max(3, len(str(len(ordered))))
    return [(f"q{i + 1:0{width}d}", e) for i, e in enumerate(ordered)]


def batches(names: list[str], count: int, overlap: int) -> list[list[str]]:
    """``count`` contiguous batches; each also takes the first ``overlap`` questions of the next one."""
    size = -(-len(names) // count)
    cores = [names[i * size : (i + 1) * size] for i in range(count)]
    return [core + cores[(i + 1) % count][:overlap] for i, core in enumerate(cores)]


def text_of(example: Example) -> str:
    return "\n".join(body for _, body in example.files)


def text_digest(example: Example) -> str:
    """sha256 of an excerpt's text (16 hex digits): ties stored answers to the texts they answered without
    saying anything of the labels, so a corpus that gained or lost an excerpt is caught instead of mis-scored."""
    return hashlib.sha256(text_of(example).encode()).hexdigest()[:16]


def digests(named: list[tuple[str, Example]]) -> dict[str, str]:
    """Question -> the digest of its text."""
    return {name: text_digest(e) for name, e in named}


def export(split: str, out: Path, count: int, overlap: int) -> int:
    named = questions(examples_of(split))
    text = {name: text_of(e) for name, e in named}
    out.mkdir(parents=True, exist_ok=True)
    for i, batch in enumerate(batches([n for n, _ in named], count, overlap), start=1):
        entries = [{"q": name, "text": text[name]} for name in batch]
        (out / f"batch_{i}.yaml").write_text(yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=10**6))
    (out / QUESTIONS).write_text(yaml.safe_dump(digests(named), sort_keys=True))
    print(f"{len(named)} questions in {count} batches (+{overlap} overlapping each) under {out}")
    return 0


def load_answers(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Every answer to every question: question -> one answer per file that answered it."""
    answers: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(directory.glob("answers_*.yaml")):
        latest: dict[str, dict[str, Any]] = {}
        try:
            entries = yaml.safe_load(path.read_text()) or []
        except yaml.YAMLError as exc:
            raise SystemExit(f"{path.name}: not YAML: {exc}".splitlines()[0]) from None
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "q" in e for e in entries):
            raise SystemExit(f"{path.name}: not a list of answers ({{q, failure_kind, category, retry_advice}})")
        for entry in entries:
            answer = {
                "failure_kind": entry.get("failure_kind"),
                "category": entry.get("category"),
                "retry_advice": entry.get("retry_advice"),
            }
            if answer["failure_kind"] == "none":
                answer["retry_advice"] = None
            if answer["failure_kind"] not in KINDS or answer["category"] not in CATEGORIES:
                raise SystemExit(f"{path.name}: {entry.get('q')}: not an answer under the contract: {answer}")
            if answer["retry_advice"] not in ADVICE or (answer["retry_advice"] is None) != (
                answer["failure_kind"] == "none"
            ):
                raise SystemExit(
                    f"{path.name}: {entry.get('q')}: retry advice {answer['retry_advice']!r} "
                    f"for failure kind {answer['failure_kind']}"
                )
            latest[str(entry["q"])] = answer
        for name, answer in latest.items():
            answers.setdefault(name, []).append(answer)
    return answers


def accuracy(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, float]:
    """Per-field share of ``(got, want)`` pairs that agree."""
    n = len(pairs)
    return {f: round(sum(g[f] == w[f] for g, w in pairs) / n, 3) if n else 0.0 for f in FIELDS}


def benign_recoveries(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> int:
    return sum(w["failure_kind"] == "none" and g["retry_advice"] is not None for g, w in pairs)


def score(split: str, directory: Path) -> dict[str, Any]:
    """The readers' answers, tied to the current texts of ``split`` by digest, scored beside the engine.

    An answer follows its text, not its question name: an excerpt added to the corpus since the export is
    simply unanswered, one removed since is counted as ``gone``, and the other answers still count."""
    examples = examples_of(split)
    manifest = directory / QUESTIONS
    if not manifest.exists():
        raise SystemExit(f"{manifest}: missing; it ties the answers to the texts export wrote")
    asked: dict[str, str] = yaml.safe_load(manifest.read_text()) or {}
    answers = load_answers(directory)
    unknown = sorted(set(answers) - set(asked))
    if unknown:
        raise SystemExit(f"answers to questions {QUESTIONS} does not list: {unknown[:5]}")
    current: dict[str, list[Example]] = {}  # digest -> the examples with that text, in question order
    for _, example in questions(examples):
        current.setdefault(text_digest(example), []).append(example)
    then: dict[str, list[str]] = {}  # digest -> the exported questions with that text, in name order
    for name in sorted(asked):
        then.setdefault(asked[name], []).append(name)
    named: dict[str, Example] = {}
    gone = 0
    for q in answers:
        same_text, k = current.get(asked[q], []), then[asked[q]].index(q)
        if k < len(same_text):  # the k-th question with a text answers the k-th excerpt with it now
            named[q] = same_text[k]
        else:
            gone += 1
    answered = sorted(named)
    engine = {o.example.id: o.got for o in run([named[n] for n in answered])}
    want = {n: named[n].expect for n in answered}
    first = [(answers[n][0], want[n]) for n in answered]
    second = [(answers[n][1], want[n]) for n in answered if len(answers[n]) > 1]
    twice = [n for n in answered if len(answers[n]) > 1]
    engine_pairs = [(engine[named[n].id], want[n]) for n in answered]
    by_kind: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        members = [n for n in answered if want[n]["failure_kind"] == kind]
        by_kind[kind] = {
            "n": len(members),
            "reader_advice": accuracy([(answers[n][0], want[n]) for n in members])["retry_advice"],
            "engine_advice": accuracy([(engine[named[n].id], want[n]) for n in members])["retry_advice"],
        }
    return {
        "split": split,
        "questions": len(examples),
        "answered": len(answered),
        "gone": gone,
        "reader": accuracy(first),
        "reader_benign_recoveries": benign_recoveries(first),
        "engine": accuracy(engine_pairs),
        "engine_benign_recoveries": benign_recoveries(engine_pairs),
        "benign": sum(w["failure_kind"] == "none" for w in want.values()),
        "answered_twice": len(twice),
        "second_reader_on_overlap": accuracy(second),
        "first_reader_on_overlap": accuracy([(answers[n][0], want[n]) for n in twice]),
        "readers_agree_on_overlap": accuracy([(answers[n][0], answers[n][1]) for n in twice]),
        "reader_or_engine_right": {
            f: round(
                sum(answers[n][0][f] == want[n][f] or engine[named[n].id][f] == want[n][f] for n in answered)
                / len(answered),
                3,
            )
            if answered
            else 0.0
            for f in FIELDS
        },
        "by_labelled_kind": by_kind,
        "reader_confusion_kind": sorted(
            Counter((want[n]["failure_kind"], answers[n][0]["failure_kind"]) for n in answered).items()
        ),
    }


def render(report: dict[str, Any]) -> str:
    def row(name: str, acc: dict[str, float]) -> str:
        return f"  {name:<34} {acc['retry_advice']:.3f}   {acc['failure_kind']:.3f}   {acc['category']:.3f}"

    lines = [
        f"{report['split']}: {report['answered']} of {report['questions']} excerpts answered blind"
        + (f" ({report['gone']} answered texts no longer in the corpus)" if report["gone"] else ""),
        f"  {'':<34} advice  kind    category",
        row("readers (text only)", report["reader"]),
        row("engine (lazarus diagnose)", report["engine"]),
        row("reader or engine right", report["reader_or_engine_right"]),
        f"  benign recoveries: readers {report['reader_benign_recoveries']}, "
        f"engine {report['engine_benign_recoveries']} (of {report['benign']})",
        f"  overlap, {report['answered_twice']} excerpts answered by two readers:",
        row("first reader", report["first_reader_on_overlap"]),
        row("second reader", report["second_reader_on_overlap"]),
        row("the two readers agree", report["readers_agree_on_overlap"]),
        "  advice by labelled kind (readers / engine):",
    ]
    for kind, figures in report["by_labelled_kind"].items():
        lines.append(
            f"    {kind:<10} n={figures['n']:<4} {figures['reader_advice']:.3f} / {figures['engine_advice']:.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="blind text-only labelling baseline for the real corpus")
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write the excerpts as anonymous questions in batches")
    ex.add_argument("--split", default="scored", choices=SPLITS)
    ex.add_argument("--out", type=Path, required=True)
    ex.add_argument("--batches", type=int, default=6)
    ex.add_argument("--overlap", type=int, default=15)
    sc = sub.add_parser("score", help="score the readers' answers against the thread labels")
    sc.add_argument("--split", default="scored", choices=SPLITS)
    sc.add_argument("--answers", type=Path, required=True)
    sc.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "export":
        return export(args.split, args.out, args.batches, args.overlap)
    report = score(args.split, args.answers)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
