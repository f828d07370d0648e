"""The comparison's summaries: p50/p95/max per measure, fault and arm, as a table and as JSON."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import asdict
from typing import Any

from benchmarks.comparison.faults import Arm, Fault
from benchmarks.comparison.measure import Run

MEASURES = {
    "anomaly_s": "fault → anomaly recorded",
    "decision_s": "anomaly → decision",
    "requeue_s": "decision → requeue verified",
    "running_again_s": "fault → running again",
    "running_elsewhere_s": "fault → running elsewhere",
    "on_bad_node_s": "time on the bad node",
    "gpu_s_lost": "GPU-seconds lost",
}
BENCH_SLURMD_TIMEOUT_S = 20  # the dev stack's slurm.conf
PRODUCTION_SLURMD_TIMEOUT_S = 300  # Slurm's default


def dist(values: list[float]) -> dict[str, float | int] | None:
    if not values:
        return None
    v = sorted(values)
    return {
        "n": len(v),
        "p50": round(statistics.median(v), 2),
        "p95": round(v[min(len(v) - 1, round(0.95 * (len(v) - 1)))], 2),
        "max": round(v[-1], 2),
    }


def production_node_fail(runs: list[Run]) -> list[float]:
    """Slurm alone's node failure → running elsewhere with SlurmdTimeout=300: the measured time with the dev
    stack's 20 s timeout replaced by 300 s (Slurm marks the node DOWN that long after its last answer)."""
    return [
        r.running_elsewhere_s - BENCH_SLURMD_TIMEOUT_S + PRODUCTION_SLURMD_TIMEOUT_S
        for r in runs
        if r.arm == Arm.SLURM and r.fault == Fault.NODE_FAIL and r.recovered and r.running_elsewhere_s is not None
    ]


def summarize(runs: list[Run]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fault in Fault:
        for arm in Arm:
            mine = [r for r in runs if r.fault == fault and r.arm == arm]
            if not mine:
                continue
            row: dict[str, Any] = {"runs": len(mine), "recovered": sum(r.recovered for r in mine)}
            for key in MEASURES:
                row[key] = dist([getattr(r, key) for r in mine if getattr(r, key) is not None])
            row["advice"] = dict(Counter(r.advice or "never" for r in mine))
            row["digest_interval_s"] = dist([r.digest_interval_s for r in mine if r.digest_interval_s is not None])
            out[f"{fault.value}/{arm.value}"] = row
    prod = dist(production_node_fail(runs))
    if prod:
        out["node-fail/slurm, SlurmdTimeout=300 (computed)"] = {"running_elsewhere_s": prod}
    return out


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| fault / arm | recovered | advice | " + " | ".join(MEASURES.values()) + " |",
        "|---|---|---|" + "---|" * len(MEASURES),
    ]
    for name, row in summary.items():
        cells = []
        for key in MEASURES:
            d = row.get(key)
            cells.append(f"{d['p50']:g} / {d['p95']:g} / {d['max']:g}" if d else "–")
        rec = f"{row['recovered']}/{row['runs']}" if "runs" in row else "–"
        advice = ", ".join(f"{k} ×{n}" for k, n in row.get("advice", {}).items()) or "–"
        lines.append(f"| {name} | {rec} | {advice} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def as_json(runs: list[Run], summary: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    return {**meta, "summary": summary, "runs": [asdict(r) for r in runs]}
