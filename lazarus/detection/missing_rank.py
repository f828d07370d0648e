"""Missing-rank inference: the rank that never reported a collective timeout is the one the others waited for.

When a collective times out, PyTorch's watchdog on every rank that reached it
prints the timeout. A rank that is stuck before the collective (a hung GPU, a
dead link, a slow node) prints nothing. So when every rank of the job but one
reports the timeout, that one rank is the suspect, and its node is the one to
blame. The world size must be known (the rank layout: nodes and tasks per
node); with two or more ranks silent, or fewer than two reporting, nothing is
inferred.
"""

from __future__ import annotations

from lazarus.detection.candidate import Candidate
from lazarus.detection.layout import RankLayout

COLLECTIVE_TIMEOUT_FAMILIES = frozenset({"nccl_watchdog"})
MAX_WORLD = 1 << 20
MIN_REPORTING = 2


def world_size(layout: RankLayout) -> int | None:
    """Ranks in the job under the layout's block distribution, or None when it cannot tell."""
    if not layout.nodes or layout.tasks_per_node is None:
        return None
    size = len(layout.nodes) * layout.tasks_per_node
    return size if 0 < size <= MAX_WORLD else None


def reporting_ranks(candidate: Candidate) -> set[int]:
    """The ranks whose lines the candidate matched (the first rank key of each place)."""
    ranks: set[int] = set()
    for _file, keys in candidate.locations:
        for kind, value in keys:
            if kind == "rank":
                ranks.add(int(value))
                break
    return ranks


def missing_rank(candidate: Candidate, layout: RankLayout) -> int | None:
    """The one rank that did not report the collective timeout every other rank reported, if there is one."""
    if candidate.signature.family not in COLLECTIVE_TIMEOUT_FAMILIES:
        return None
    size = world_size(layout)
    if size is None:
        return None
    reported = {r for r in reporting_ranks(candidate) if 0 <= r < size}
    if len(reported) < MIN_REPORTING or len(reported) != size - 1:
        return None
    return next(r for r in range(size) if r not in reported)
