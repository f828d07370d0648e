"""Synthetic training-throughput history, pushed into the test Prometheus by remote write."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from lazarus.straggler.models import DEFAULT_METRIC
from tests.straggler.remote_write import Series, push

STEP_MS = 15_000  # one sample every 15 s, as a typical scrape
HISTORY_MS = 30 * 60_000


def now_ms() -> int:
    """Now, on a whole second (the query API rounds its range to seconds)."""
    return int(datetime.now(UTC).timestamp()) * 1000


def job_history(
    job_id: str, nodes: list[str], end_ms: int, slow_node: str | None = None, slow_from_ms: int | None = None,
    factor: float = 0.6, ranks_per_node: int = 2, spread: float = 0.05, seed: int = 0,
) -> list[Series]:  # fmt: skip
    """Per-rank throughput for 30 minutes up to ``end_ms``; ``slow_node`` runs at ``factor`` from ``slow_from_ms``."""
    rng = random.Random(seed)
    out: list[Series] = []
    for node in nodes:
        for r in range(ranks_per_node):
            rank = str(nodes.index(node) * ranks_per_node + r)
            samples = []
            for ts in range(end_ms - HISTORY_MS, end_ms + 1, STEP_MS):
                value = 500.0 * (1 + rng.uniform(-spread, spread))
                if node == slow_node and slow_from_ms is not None and ts >= slow_from_ms:
                    value *= factor
                samples.append((ts, value))
            labels = {"__name__": DEFAULT_METRIC, "job_id": job_id, "node": node, "rank": rank}
            out.append((labels, samples))
    return out


def push_history(url: str, series: list[Series]) -> None:
    push(url, series)
