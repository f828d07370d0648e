"""The pure decision core: what to do about one anomaly, given the job's history and policy.

No Temporal imports, no clock, no I/O: :func:`decide_advice` is a plain function of its
arguments, so it replays deterministically inside the workflow and is unit
tested in milliseconds (tests/workflows/test_decision.py).

Example story: Xid 79 on node2 while attempt 0 runs on node[1-2] →
``retry_excluding_nodes`` naming node2 → Decision(restart, exclude=[node2],
drain=[node2]) → requeuehold, ExcNodeList=node2, release → attempt 1 on node[1,3].
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lazarus.models.diagnosis import Category, Diagnosis, EvidenceSource, FailureKind, RetryAdvice
from lazarus.models.policy import Policy
from lazarus.models.recovery import AdviceAction, Anomaly, Attempt, AttemptEnded
from lazarus.models.slurm import JobState
from workflows.patches import BOUND_TO_ALLOCATION, FINISHING_IS_NOT_HUNG


@dataclass(frozen=True)
class Decision:
    action: AdviceAction
    reason: str
    exclude_nodes: list[str] = field(default_factory=list)
    drain_nodes: list[str] = field(default_factory=list)


def consecutive_attempts_without_checkpoint(attempts: list[Attempt]) -> int:
    """How many of the latest attempts, counting back from the newest, saved no new checkpoint."""
    count = 0
    for attempt in reversed(attempts):
        if attempt.saved_new_checkpoint:
            break
        count += 1
    return count


def decide_advice(
    anomaly: Anomaly, attempts: list[Attempt], policy: Policy, unpatched: frozenset[str] = frozenset()
) -> Decision:
    """Decide the action for ``anomaly`` on the newest attempt in ``attempts``.

    ``unpatched``: the ids of :mod:`workflows.patches` the workflow run predates; their old rules apply.
    """
    diag = anomaly.diagnosis
    current = attempts[-1] if attempts else Attempt(index=anomaly.attempt)
    signature = diag.signature or anomaly.kind.value

    if anomaly.kind == FailureKind.HANG and FINISHING_IS_NOT_HUNG not in unpatched and current.finished_training:
        return Decision(
            AdviceAction.NONE,
            f"training reached its last step ({current.last_step} of {current.total_steps}): the job is ending, "
            "not hung; Lazarus leaves it to Slurm",
        )
    if anomaly.kind == FailureKind.STRAGGLER and not policy.act_on_stragglers:
        return Decision(
            AdviceAction.NONE,
            f"straggler on {', '.join(diag.implicated_nodes) or 'unknown node'} "
            "(advice only: policy.act_on_stragglers is off)",
        )
    if diag.retry_advice == RetryAdvice.STOP:
        return Decision(AdviceAction.STOP, f"{diag.category.value} failure ({signature}): restarting will not help")

    no_ckpt = consecutive_attempts_without_checkpoint(attempts)
    if no_ckpt >= policy.max_attempts_without_checkpoint:
        return Decision(
            AdviceAction.STOP,
            f"{no_ckpt} consecutive attempts saved no new checkpoint "
            f"(limit {policy.max_attempts_without_checkpoint}); last failure: {signature}",
        )
    made = current.index + 1  # Slurm's count, even when Lazarus joined the job late
    if made >= policy.max_attempts:
        return Decision(
            AdviceAction.STOP, f"attempt cap reached ({made}/{policy.max_attempts}); last failure: {signature}"
        )

    previous = attempts[-2] if len(attempts) >= 2 else None
    if (
        anomaly.kind == FailureKind.CRASH
        and diag.category == Category.UNKNOWN
        and previous is not None
        and previous.anomaly is not None
        and previous.anomaly.kind == FailureKind.CRASH
        and previous.anomaly.diagnosis.category == Category.UNKNOWN
    ):
        return Decision(AdviceAction.STOP, "unknown failure repeated: the single retry on the same nodes did not help")

    already = list(current.excluded_nodes)
    # a job's own output may name only nodes of its allocation (trust rule): no other node is ever excluded
    bad = current.bound_to_allocation(diag.implicated_nodes)
    if BOUND_TO_ALLOCATION in unpatched:  # a run started before the bound decides as it always did
        named = list(diag.implicated_nodes)
        bad = [n for n in named if not current.nodes or n in current.nodes] or named
    if diag.retry_advice == RetryAdvice.RETRY_EXCLUDING_NODES and bad:
        exclude = sorted(set(already) | set(bad))
        drain = sorted(bad) if policy.drain_implicated_nodes and diag.category == Category.HARDWARE else []
        return Decision(
            AdviceAction.RESTART,
            f"{diag.category.value} failure ({signature}) on {', '.join(bad)}: restart excluding {', '.join(bad)}",
            exclude_nodes=exclude,
            drain_nodes=drain,
        )
    what = "hang" if anomaly.kind == FailureKind.HANG else f"{diag.category.value} failure ({signature})"
    return Decision(AdviceAction.RESTART, f"{what}: restart on the same nodes", exclude_nodes=already)


# Slurm end states without a recognised log line -> what they mean (fallback attribution).
_SCHEDULER_VERDICTS: dict[JobState, tuple[Category, RetryAdvice, str]] = {
    JobState.NODE_FAIL: (Category.INFRASTRUCTURE, RetryAdvice.RETRY_EXCLUDING_NODES, "slurm_node_fail"),
    JobState.BOOT_FAIL: (Category.INFRASTRUCTURE, RetryAdvice.RETRY_EXCLUDING_NODES, "slurm_boot_fail"),
    JobState.TIMEOUT: (Category.APPLICATION, RetryAdvice.RETRY_SAME_NODES, "slurm_time_limit"),
    JobState.PREEMPTED: (Category.INFRASTRUCTURE, RetryAdvice.RETRY_SAME_NODES, "slurm_preempted"),
    JobState.OUT_OF_MEMORY: (Category.APPLICATION, RetryAdvice.STOP, "slurm_out_of_memory"),
    JobState.FAILED: (Category.UNKNOWN, RetryAdvice.RETRY_SAME_NODES, "slurm_job_failed"),
}


def scheduler_diagnosis(ended: AttemptEnded) -> Diagnosis | None:
    """A diagnosis from the scheduler's view alone; None when the end needs no recovery."""
    verdict = _SCHEDULER_VERDICTS.get(ended.state)
    if verdict is None:
        return None
    category, advice, signature = verdict
    if ended.state == JobState.FAILED and ended.failed_nodes:
        # a plain failure while one of the job's nodes is down or drained (e.g. "Kill task failed")
        category, advice, signature = Category.INFRASTRUCTURE, RetryAdvice.RETRY_EXCLUDING_NODES, "slurm_node_unhealthy"
    nodes = list(ended.failed_nodes) if advice == RetryAdvice.RETRY_EXCLUDING_NODES else []
    if advice == RetryAdvice.RETRY_EXCLUDING_NODES and not nodes:
        advice = RetryAdvice.RETRY_SAME_NODES
    exit_text = f", exit code {ended.exit_code}" if ended.exit_code is not None else ""
    return Diagnosis(
        failure_kind=FailureKind.CRASH,
        category=category,
        signature=signature,
        retry_advice=advice,
        implicated_nodes=nodes,
        implicated_by=EvidenceSource.SCHEDULER,
        confidence=0.6 if nodes else 0.4,
        explanation=f"Slurm shows the attempt {ended.state.value}{exit_text}; no recognised failure line in the logs",
    )


def hang_diagnosis(attempt: Attempt, budget_s: float) -> Diagnosis:
    last = f"step {attempt.last_step}" if attempt.last_step is not None else "no progress line yet"
    return Diagnosis(
        failure_kind=FailureKind.HANG,
        category=Category.UNKNOWN,
        signature="hang_no_progress",
        retry_advice=RetryAdvice.RETRY_SAME_NODES,
        confidence=0.7,
        explanation=f"no training progress for {budget_s:.0f} s while the job was running ({last})",
    )
