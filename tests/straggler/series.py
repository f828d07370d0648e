"""Builders for throughput windows used by the detector specs."""

from __future__ import annotations

import random
import zlib
from datetime import UTC, datetime, timedelta

from lazarus.straggler.models import ThroughputSeries, WindowPoint

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=1)


def jittery(n: int, base: float = 1000.0, spread: float = 0.05, seed: int = 0) -> list[float]:
    """``n`` values within +-``spread`` of ``base`` (deterministic per seed)."""
    rng = random.Random(seed)
    return [base * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def drop_at(values: list[float], start: int, factor: float) -> list[float]:
    """``values`` with every window from index ``start`` on multiplied by ``factor``."""
    return [v * factor if i >= start else v for i, v in enumerate(values)]


def job(job_id: str, nodes: dict[str, list[float]], rank: str | None = None) -> list[ThroughputSeries]:
    return [
        ThroughputSeries(
            job_id=job_id,
            node=node,
            rank=rank,
            windows=[WindowPoint(end=T0 + (i + 1) * WINDOW, value=v) for i, v in enumerate(values) if v is not None],
        )
        for node, values in nodes.items()
    ]


def healthy_job(job_id: str, n_nodes: int = 4, n_windows: int = 30) -> dict[str, list[float]]:
    # zlib.crc32, not hash(): str hashes change per process, and the specs must not.
    return {f"node{i}": jittery(n_windows, seed=zlib.crc32(f"{job_id}/{i}".encode())) for i in range(1, n_nodes + 1)}
