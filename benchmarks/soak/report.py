"""The soak's table (invariant | checked | violations | example), its verdict line, and its JSON."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from benchmarks.soak.models import SoakResult

EXAMPLE_WIDTH = 160


def table(result: SoakResult) -> str:
    rows = [("invariant", "checked", "violations", "example")]
    for inv in result.invariants:
        example = inv.violations[0] if inv.violations else (inv.note or "-")
        if len(example) > EXAMPLE_WIDTH:
            example = example[: EXAMPLE_WIDTH - 1] + "…"
        rows.append((inv.name, f"{inv.checked} {inv.unit}", str(len(inv.violations)), example))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def fault_summary(result: SoakResult) -> str:
    counts = Counter(f.kind for f in result.faults if not f.skipped)
    skipped = [f"{f.kind} (skipped: {f.detail})" for f in result.faults if f.skipped]
    text = ", ".join(f"{kind} x{n}" for kind, n in sorted(counts.items())) or "none"
    return f"faults: {text}" + (f"; {'; '.join(skipped)}" if skipped else "")


def verdict(result: SoakResult) -> str:
    passed = sum(1 for i in result.invariants if i.passed)
    total = len(result.invariants)
    word = "PASS" if result.passed else "FAIL"
    failed = [i.name for i in result.invariants if not i.passed]
    tail = f"; failed: {', '.join(failed)}" if failed else ""
    return f"VERDICT: {word} ({passed}/{total} invariants, {result.jobs} jobs, {result.faults_injected} faults{tail})"


def write_json(result: SoakResult, path: Path) -> None:
    data = result.model_dump(mode="json")
    data["passed"] = result.passed
    data["verdict"] = verdict(result)
    path.write_text(json.dumps(data, indent=2))


def print_violations(result: SoakResult, limit: int = 10) -> str:
    """Every invariant's violations (the first ``limit`` of each), for the output after the table."""
    lines = []
    for inv in result.invariants:
        if inv.violations:
            lines.append(f"{inv.name}: {len(inv.violations)} violation(s)")
            lines += [f"  - {v}" for v in inv.violations[:limit]]
            if len(inv.violations) > limit:
                lines.append(f"  ... and {len(inv.violations) - limit} more (see --json)")
    return "\n".join(lines)
