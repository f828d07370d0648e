"""Which throughput series to believe: a job publishes its own metrics, so they count only inside its allocation.

Every label of a series is written by the job (or whatever pushes for it), so
nothing stops it from naming another job's id or another job's node. Slurm's
view is the reference: a series counts only when its ``job_id`` names a job
that Slurm shows running and its ``node`` is one of that job's nodes. Anything
else is set aside before the detector runs, so a spoofed label can neither
name a node outside the job nor, as a fast or slow "peer", move another job's
scores. Pure: the caller passes the scheduler snapshot it already has.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from lazarus.straggler.models import ThroughputSeries


def trusted_series(
    series: Iterable[ThroughputSeries], allocations: Mapping[str, Collection[str]]
) -> tuple[list[ThroughputSeries], list[ThroughputSeries]]:
    """``series`` split into those inside their job's allocation (``allocations``: job id → the nodes Slurm
    shows it running on) and the others."""
    trusted: list[ThroughputSeries] = []
    ignored: list[ThroughputSeries] = []
    for s in series:
        nodes = allocations.get(s.job_id)
        (trusted if nodes is not None and s.node in nodes else ignored).append(s)
    return trusted, ignored


def describe_ignored(ignored: list[ThroughputSeries], shown: int = 5) -> str:
    """One line for the log: which (job, node) labels were set aside."""
    pairs = sorted({(s.job_id, s.node) for s in ignored})
    text = ", ".join(f"job {job} node {node or '?'}" for job, node in pairs[:shown])
    more = f" and {len(pairs) - shown} more" if len(pairs) > shown else ""
    return f"{text}{more}"
