"""Expedited requeue: a restarted attempt goes to the top of its partition's queue, and the boost is lifted later.

What Slurm 22.05 offers, and why Lazarus uses a priority:

- ``scontrol top`` reorders only jobs of the *same* user, account, QOS and partition (by their nice
  values): it can never put a job ahead of another user's work, which is what a waiting training run needs.
- Slurm 22.05 has no expedited-requeue flag.
- ``scontrol update JobId=<id> Priority=<n>`` by an operator (Lazarus's operator account, the scheduler
  worker's user) sets an explicit priority, which the scheduler orders pending jobs by, under every
  ``PriorityType``. Lazarus sets one more than the highest priority of any other pending job of the partition.

Read, act if needed, verify: the job is read fresh first, and only a pending, unheld attempt the request
names is touched (an attempt that already runs needs no boost; a user's hold is the user's choice). An
attempt already above every rival is left as it is, so a retry never boosts twice. The result is read back.

Lift: an explicit priority stays with the job; when the boosted attempt runs, :func:`lift` sets it back to
what it was, so a later requeue that Lazarus did not decide waits like everyone else's. It changes nothing
unless the job is on the boosted attempt with exactly the boosted priority.
"""

from __future__ import annotations

from lazarus.models.slurm import ExpediteResult, JobSnapshot, JobState, LiftRequest, LiftResult
from lazarus.slurm import validate
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.waiting import Heartbeat, wait_for

# The highest priority Slurm stores (uint32, less the values it reserves for "infinite" and "no value").
MAX_PRIORITY = 0xFFFFFFFD


async def expedite(client: SlurmReader, job_id: int, attempt: int, heartbeat: Heartbeat) -> ExpediteResult:
    """Put ``attempt`` of ``job_id``, pending, ahead of every other pending job of its partition; verified."""
    job = await client.job(validate.job_id(job_id))
    heartbeat(f"job {job_id}: read before the expedite")
    why_not = _why_not(job, attempt)
    if why_not:
        return ExpediteResult(job_id=job_id, attempt=attempt, done=False, priority_before=job.priority, reason=why_not)
    rivals = await _rivals(client, job)
    heartbeat(f"job {job_id}: {len(rivals)} other pending job(s) in partition {job.partition}")
    top = max((rival.priority or 0 for rival in rivals), default=0)
    before = job.priority or 0
    if before > top:
        return _result(job, attempt, rivals, before, reason="already ahead of every other pending job")
    target = validate.priority(min(top + 1, MAX_PRIORITY))
    await client.run(["scontrol", "update", f"JobId={job.job_id}", f"Priority={target}"], f"job {job.job_id}")
    heartbeat(f"job {job_id}: priority {before} -> {target}")
    after = await wait_for(
        lambda: client.job(job.job_id),
        lambda j: j.restarts != attempt or j.state is not JobState.PENDING or (j.priority or 0) >= target,
        timeout=client.verify_timeout,
        what=f"job {job_id} at priority {target}",
        heartbeat=heartbeat,
    )
    if after.restarts == attempt and after.state is JobState.PENDING and (after.priority or 0) <= top:
        return _result(after, attempt, rivals, before, reason=f"priority reads {after.priority}, not above {top}")
    return _result(after, attempt, rivals, before)


async def lift(client: SlurmReader, request: LiftRequest, heartbeat: Heartbeat) -> LiftResult:
    """Set the expedited attempt's priority back to ``request.restore``; anything not exactly ours is left alone."""
    job = await client.job(validate.job_id(request.job_id))
    heartbeat(f"job {job.job_id}: read before lifting the expedite")
    if job.restarts != request.attempt or job.priority != request.boosted:
        reason = (
            f"job {job.job_id} is on attempt {job.restarts} at priority {job.priority}, not attempt "
            f"{request.attempt} at the boosted {request.boosted}: not Lazarus's boost any more"
        )
        return LiftResult(job_id=job.job_id, changed=False, priority=job.priority, reason=reason)
    restore = validate.priority(request.restore)  # Priority=0 would hold the job
    await client.run(["scontrol", "update", f"JobId={job.job_id}", f"Priority={restore}"], f"job {job.job_id}")
    after = await wait_for(
        lambda: client.job(job.job_id),
        lambda j: j.priority != request.boosted,
        timeout=client.verify_timeout,
        what=f"job {job.job_id} back at priority {restore}",
        heartbeat=heartbeat,
    )
    return LiftResult(job_id=after.job_id, changed=True, priority=after.priority)


def _why_not(job: JobSnapshot, attempt: int) -> str:
    """Why this attempt cannot (or need not) be expedited; empty when it can."""
    if job.restarts != attempt:
        return f"job {job.job_id} is on attempt {job.restarts}, not {attempt}"
    if job.state is not JobState.PENDING:
        return f"attempt {attempt} is already {job.state.value.lower()}: nothing to expedite"
    if job.held:
        return f"attempt {attempt} is held ({job.state_reason or 'priority 0'}): a held job is not expedited"
    return ""


async def _rivals(client: SlurmReader, job: JobSnapshot) -> list[JobSnapshot]:
    """The other pending, unheld jobs that share a partition with ``job``."""
    mine = set(job.partition.split(","))
    return [
        other
        for other in await client.jobs()
        if other.job_id != job.job_id
        and other.state is JobState.PENDING
        and not other.held
        and mine & set(other.partition.split(","))
    ]


def _result(job: JobSnapshot, attempt: int, rivals: list[JobSnapshot], before: int, reason: str = "") -> ExpediteResult:
    now = job.priority or 0
    done = job.restarts == attempt and all(now > (rival.priority or 0) for rival in rivals)
    return ExpediteResult(
        job_id=job.job_id,
        attempt=attempt,
        done=done,
        priority_before=before,
        priority_after=job.priority,
        ahead_of=sorted(rival.job_id for rival in rivals if now > (rival.priority or 0)),
        reason=reason if not done or reason.startswith("already") else "",
    )
