"""The restore benchmark's summary: p50 / p95 / max per milestone and arm, as a table and as JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from benchmarks.comparison.report import dist
from benchmarks.restoration.measure import Run
from benchmarks.restoration.workload import TITLES, Arm

MEASURES = {
    "requeued_s": "fault → requeued",
    "running_s": "fault → running",
    "progress_restored_s": "fault → progress restored",
    "completed_s": "fault → completed",
    "steps_lost": "steps lost",
    "refilled_s": "fault → pool refilled",
}


def summarize(runs: list[Run]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm in Arm:
        mine = [r for r in runs if r.arm == arm]
        if not mine:
            continue
        row: dict[str, Any] = {
            "runs": len(mine),
            "restored_elsewhere": sum(r.restored_elsewhere for r in mine),
            "on_bad_node": sum(bool(r.on_bad_node) for r in mine),
            "expedited": sum(bool(r.expedited) for r in mine),
        }
        for key in MEASURES:
            row[key] = dist([float(v) for r in mine if (v := getattr(r, key)) is not None])
        out[arm.value] = row
    return out


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| arm | progress restored off the bad node | " + " | ".join(MEASURES.values()) + " |",
        "|---|---|" + "---|" * len(MEASURES),
    ]
    for arm, row in summary.items():
        cells = [f"{d['p50']:g} / {d['p95']:g} / {d['max']:g}" if (d := row.get(k)) else "–" for k in MEASURES]
        restored = f"{row['restored_elsewhere']}/{row['runs']}"
        if row["on_bad_node"]:
            restored += f" ({row['on_bad_node']} back on the bad node)"
        lines.append(f"| {TITLES[Arm(arm)]} | {restored} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def as_json(runs: list[Run], summary: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    return {
        **meta,
        "summary": summary,
        "runs": [{**asdict(r), "restored_elsewhere": r.restored_elsewhere} for r in runs],
    }
