"""Find stragglers in windowed throughput: pure, deterministic, no I/O.

For each series (a node, or a rank) of a job, every window gets a **score**:
its throughput divided by the median of the job's *other* series in the same
window. Dividing by the peers cancels what the whole job does together
(evaluation phases, checkpoint stalls, a slow filesystem), so only a series
that falls behind its peers moves. A series' **baseline** is the median of its
own scores over the earlier windows, which absorbs hardware that was always a
little slower. A straggler is a series whose score stayed at or below
``(1 - drop_fraction) * baseline`` for the last ``min_windows`` windows.

A job with a single series has no peers: its score is its raw throughput and a
finding is marked ``individual`` (lower confidence: a lone series cannot tell a
slow node from a slow job).

Caveat (from NVRx and traceml #252): in synchronous data-parallel training every
rank waits for the slowest at each collective, so wall-clock throughput drops on
*all* ranks together. Per-rank metrics must measure compute-only time (CUDA
events around the forward/backward compute, or collective arrival skew) for the
relative score to single out the slow node; see docs/stragglers.md.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from statistics import median

from lazarus.straggler.models import (
    DEFAULT_METRIC,
    StragglerFinding,
    StragglerThresholds,
    ThroughputSeries,
    WindowEvidence,
)

Key = tuple[str, str | None]


def find_stragglers(
    series: Iterable[ThroughputSeries], thresholds: StragglerThresholds, metric: str = DEFAULT_METRIC
) -> list[StragglerFinding]:
    """Every current straggler, job by job, slowest first within a job."""
    by_job: dict[str, list[ThroughputSeries]] = defaultdict(list)
    for s in series:
        by_job[s.job_id].append(s)
    findings: list[StragglerFinding] = []
    for job_id in sorted(by_job):
        findings.extend(_job_stragglers(job_id, by_job[job_id], thresholds, metric))
    return findings


def _job_stragglers(
    job_id: str, series: list[ThroughputSeries], thresholds: StragglerThresholds, metric: str
) -> list[StragglerFinding]:
    table: dict[datetime, dict[Key, float]] = defaultdict(dict)
    for s in series:
        for w in s.windows:
            table[w.end][s.key] = w.value
    times = sorted(table)
    # Each window's values sorted once: a peer median then costs O(log n) per series, not a sort.
    ordered = {t: sorted(table[t].values()) for t in times}
    alone = len({s.key for s in series}) == 1
    findings = []
    for s in series:
        scores = [_score(s.key, t, table[t], ordered[t]) for t in times]
        finding = _judge(job_id, s, scores, thresholds, alone, metric)
        if finding is not None:
            findings.append(finding)
    return sorted(findings, key=lambda f: -f.drop_fraction)


# (window end, value, peers' median or None, score); plain tuples because there is one per series and window.
Score = tuple[datetime, float, float | None, float]


def _score(key: Key, end: datetime, row: dict[Key, float], ordered: list[float]) -> Score | None:
    """This series' score in one window; None when it has no sample or its peers made no progress."""
    value = row.get(key)
    if value is None:
        return None
    if len(ordered) == 1:
        return (end, value, None, value)
    reference = _median_without(ordered, value)
    if reference <= 0:
        return None  # the peers stalled too: a hang or a pause, not a straggler
    return (end, value, reference, value / reference)


def _median_without(ordered: list[float], value: float) -> float:
    """Median of ``ordered`` (sorted) with one occurrence of ``value`` left out."""
    skip = bisect_left(ordered, value)
    rest = len(ordered) - 1

    def at(i: int) -> float:
        return ordered[i if i < skip else i + 1]

    return at(rest // 2) if rest % 2 else (at(rest // 2 - 1) + at(rest // 2)) / 2


def _judge(
    job_id: str,
    s: ThroughputSeries,
    scores: list[Score | None],
    thresholds: StragglerThresholds,
    alone: bool,
    metric: str,
) -> StragglerFinding | None:
    # Only the history before the judged windows forms the baseline, so the slowdown cannot hide itself.
    recent, history = scores[-thresholds.min_windows :], scores[: -thresholds.min_windows]
    history_scores = [sc[3] for sc in history if sc is not None]
    if len(recent) < thresholds.min_windows or len(history_scores) < thresholds.min_baseline_windows:
        return None
    baseline = median(history_scores)
    if baseline <= 0:
        return None
    limit = (1 - thresholds.drop_fraction) * baseline
    streak: list[Score] = []
    for sc in reversed(scores):  # the slow run that reaches the latest window, however long
        if sc is None or sc[3] > limit:
            break
        streak.append(sc)
    if len(streak) < thresholds.min_windows:
        return None
    streak.reverse()
    drop = 1 - median(sc[3] for sc in streak) / baseline
    return StragglerFinding(
        job_id=job_id,
        node=s.node,
        rank=s.rank,
        mode="individual" if alone else "relative",
        drop_fraction=round(min(max(drop, 0.0), 1.0), 4),
        windows=len(streak),
        baseline_score=round(baseline, 6),
        evidence=[WindowEvidence(end=e, value=v, reference=r, score=sc) for e, v, r, sc in streak],
        metric=metric,
    )
