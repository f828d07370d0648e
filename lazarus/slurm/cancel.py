"""Cancel a job Lazarus decided to stop, so its allocation goes back to the cluster; safe to retry.

A stop decision is about one attempt. Its ranks may still hold the
allocation (blocked on a dead peer, or hung) until a collective timeout that
costs minutes to hours of GPU time, so Lazarus cancels the job, but only
while fresh state still shows that attempt running, pending or suspended:

- the job shows another attempt (Slurm requeued it, or someone did): left
  alone, ``not_done_reason`` says so;
- the attempt ended on its own (or is ending: COMPLETING is waited out):
  left alone, ``state`` and ``exit_code`` say how it ended;
- the attempt already shows CANCELLED: ``already_done`` (a previous try of
  this action that crashed after ``scancel``, or someone else cancelled it;
  either way the allocation is free);
- otherwise ``scancel`` and read again until the job has left
  RUNNING/PENDING (a retryable :class:`VerificationError` if it has not
  yet), ``cancelled`` set.

A job Slurm no longer knows (purged after MinJobAge) ended long ago: left
alone too. ``scancel`` refused because the job finished between the read and
the command is read again and reported as ended.
"""

from __future__ import annotations

from lazarus.models.slurm import CancelRequest, CancelResult, JobSnapshot, JobState
from lazarus.slurm import validate
from lazarus.slurm.errors import OperationRefusedError, UnknownJobError
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.waiting import Heartbeat, wait_for


async def cancel_attempt(client: SlurmReader, request: CancelRequest, heartbeat: Heartbeat) -> CancelResult:
    """Cancel ``request.job_id`` if it is still on ``request.expected_attempt`` and holds its allocation."""
    job_id = validate.job_id(request.job_id)
    try:
        job = await _settled(client, job_id, heartbeat)
    except UnknownJobError:
        return CancelResult(
            job_id=job_id,
            attempt=request.expected_attempt,
            state=JobState.UNKNOWN,
            not_done_reason=f"Slurm no longer knows job {job_id}: it ended long ago, nothing to cancel",
        )
    left = _leave_alone(job, request)
    if left is not None:
        return left
    try:
        await client.run(["scancel", str(job_id)], f"job {job_id}")
    except OperationRefusedError:  # it finished between the read and scancel: say how
        heartbeat(f"job {job_id}: scancel refused, reading again")
        ended = _leave_alone(await _settled(client, job_id, heartbeat), request)
        if ended is None:
            raise
        return ended
    heartbeat(f"job {job_id}: scancel sent")
    after = await wait_for(
        lambda: client.job(job_id),
        lambda j: j.state.finished,
        timeout=client.verify_timeout,
        what=f"job {job_id} cancelled (left RUNNING/PENDING)",
        heartbeat=heartbeat,
    )
    return CancelResult(job_id=job_id, attempt=after.restarts, state=after.state, cancelled=True)


async def _settled(client: SlurmReader, job_id: int, heartbeat: Heartbeat) -> JobSnapshot:
    """The job as Slurm shows it, once it is not COMPLETING (how an ending attempt ends decides)."""
    job = await wait_for(
        lambda: client.job(job_id),
        lambda j: j.state is not JobState.COMPLETING,
        timeout=client.verify_timeout,
        what=f"job {job_id} settled",
        heartbeat=heartbeat,
    )
    heartbeat(f"job {job_id}: read before cancelling")
    return job


def _leave_alone(job: JobSnapshot, request: CancelRequest) -> CancelResult | None:
    """The result when fresh state says there is nothing (more) to cancel; None to cancel."""
    if job.restarts != request.expected_attempt:
        return CancelResult(
            job_id=job.job_id,
            attempt=job.restarts,
            state=job.state,
            not_done_reason=f"job {job.job_id} is at attempt {job.restarts}, not attempt {request.expected_attempt} "
            "the stop was decided for; Lazarus cancels only the attempt it decided about",
        )
    if job.state is JobState.CANCELLED:
        return CancelResult(job_id=job.job_id, attempt=job.restarts, state=job.state, already_done=True)
    if not job.state.finished:  # running, pending, suspended: it holds (or will take) an allocation
        return None
    return CancelResult(
        job_id=job.job_id,
        attempt=job.restarts,
        state=job.state,
        exit_code=job.exit_code,
        not_done_reason=f"attempt {job.restarts} of job {job.job_id} had already ended {job.state.value}: "
        "nothing to cancel",
    )
