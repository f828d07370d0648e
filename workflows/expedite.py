"""The pure expedite rule: whether a restart goes to the top of its partition's queue.

Only failures Lazarus attributes to infrastructure or hardware jump the queue: an application failure, a
hang or an unknown failure waits like everyone else. Back-off: after ``Policy.expedite.max_expedited``
restarts for the same failure (its signature) the job waits like everyone else too, so a job that keeps
failing cannot start a preemption storm. Off unless the policy turns it on (a job comment may only turn it off).
No Temporal imports, no clock, no I/O; tests/workflows/test_expedite.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from lazarus.models.diagnosis import Category
from lazarus.models.policy import Policy
from lazarus.models.recovery import Advice, AdviceAction

EXPEDITED_CATEGORIES = frozenset({Category.INFRASTRUCTURE, Category.HARDWARE})
# Infrastructure by category, but no fault to make up for: the job used up the time it asked for.
NEVER_EXPEDITED = frozenset({"slurm_time_limit"})


@dataclass(frozen=True)
class Expedite:
    """The rule's answer: ``reason`` is None when the policy's expedite is off (nothing to record)."""

    expedite: bool
    reason: str | None


def expedite_rule(advice: Advice, earlier: list[Advice], policy: Policy) -> Expedite:
    """Whether ``advice`` (a restart) is expedited, given the job's ``earlier`` advice (oldest first)."""
    if not policy.expedite.enabled or advice.action != AdviceAction.RESTART:
        return Expedite(False, None)
    what = f"{advice.category.value} failure ({advice.signature or 'no signature'})"
    if advice.signature in NEVER_EXPEDITED:
        return Expedite(
            False, f"not expedited: the {what} is the job's own time running out; it waits like everyone else's"
        )
    if advice.category not in EXPEDITED_CATEGORIES:
        return Expedite(
            False, f"not expedited: the {what} is not infrastructure or hardware; the job waits like everyone else's"
        )
    same = sum(
        1
        for other in earlier
        if other.action == AdviceAction.RESTART
        and other.signature == advice.signature
        and other.category == advice.category
        and other.generation != advice.generation
    )
    limit = policy.expedite.max_expedited
    if same >= limit:
        return Expedite(
            False,
            f"not expedited: {same + 1} restarts for the same {what}, more than max_expedited {limit}; "
            "the job waits like everyone else",
        )
    return Expedite(True, f"expedited: {what}, restart {same + 1} of at most {limit} that go to the top of the queue")
