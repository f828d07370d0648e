"""What the scale benchmarks read: process CPU and memory from /proc, workflow histories, cycle times, percentiles."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from lazarus import metrics
from lazarus.models import names

TICKS = os.sysconf("SC_CLK_TCK")
# The server suggests continue-as-new at 4 Ki events or 4 MiB of history (Temporal's defaults:
# limit.historyCount.suggestContinueAsNew, limit.historySize.suggestContinueAsNew); the job workflow follows it.
CAN_EVENTS = 4096
CAN_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ProcSample:
    """One process's CPU seconds so far and its resident memory now and at peak."""

    cpu_s: float
    rss_mib: float
    peak_rss_mib: float


def proc_sample(pid: int) -> ProcSample:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    status = dict(line.split(":", 1) for line in lines if ":" in line)
    return ProcSample(
        cpu_s=cpu,
        rss_mib=int(status["VmRSS"].split()[0]) / 1024,
        peak_rss_mib=int(status["VmHWM"].split()[0]) / 1024,
    )


@dataclass(frozen=True)
class HistoryWindow:
    """One job workflow's events inside a time window."""

    workflow_tasks: int
    events: int
    bytes: int
    total_events: int


async def history_window(client: Client, cluster: str, job_id: int, start: datetime, end: datetime) -> HistoryWindow:
    history = await client.get_workflow_handle(names.workflow_id(cluster, job_id)).fetch_history()
    inside = [e for e in history.events if start <= e.event_time.ToDatetime(tzinfo=start.tzinfo) < end]
    return HistoryWindow(
        workflow_tasks=sum(e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED for e in inside),
        events=len(inside),
        bytes=sum(e.ByteSize() for e in inside),
        total_events=len(history.events),
    )


@dataclass(frozen=True)
class Cycles:
    """The telemetry loop's cycle count and total seconds so far (its Prometheus histogram, read in-process)."""

    count: float
    seconds: float
    buckets: dict[float, float]


def cycles() -> Cycles:
    count = seconds = 0.0
    buckets: dict[float, float] = {}
    for family in metrics.TELEMETRY_CYCLE_DURATION.collect():
        for sample in family.samples:
            if sample.name.endswith("_count"):
                count += sample.value
            elif sample.name.endswith("_sum"):
                seconds += sample.value
            elif sample.name.endswith("_bucket"):
                bound = float(sample.labels["le"])
                buckets[bound] = buckets.get(bound, 0.0) + sample.value
    return Cycles(count, seconds, buckets)


def cycle_p95_bound(before: Cycles, after: Cycles) -> float:
    """The upper bound of the histogram bucket holding the window's 95th percentile cycle."""
    total = after.count - before.count
    for bound in sorted(after.buckets):
        if after.buckets[bound] - before.buckets.get(bound, 0.0) >= 0.95 * total:
            return bound
    return math.inf


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]
