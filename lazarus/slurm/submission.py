"""Put a job under Lazarus: submit it with the opt-in comment, or set the comment of a job already queued.

``submit`` is the one action that cannot be retried blindly: a second
``sbatch`` is a second job. It is therefore never run by an activity, only by
the CLI and the demo on a person's behalf; it still verifies, by reading the
new job back, that Slurm holds it with the intended comment.

``set_comment`` follows the adapter's usual discipline: read the job, send
``scontrol update`` only when the comment differs, then read until it shows.
"""

from __future__ import annotations

from lazarus.errors import shorten
from lazarus.models.slurm import CommentResult, SubmitRequest, SubmitResult
from lazarus.slurm import validate
from lazarus.slurm.errors import InvalidArgumentError, MalformedOutputError, VerificationError
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.waiting import Heartbeat, wait_for


async def submit(reader: SlurmReader, request: SubmitRequest) -> SubmitResult:
    """``sbatch --parsable [--comment=…] ARGS``, then a fresh read of the new job."""
    comment = None if request.comment is None else validate.comment(request.comment)
    args = validate.sbatch_args(request.args, adds_comment=comment is not None)
    options = [] if comment is None else [f"--comment={comment}"]
    result = await reader.run(["sbatch", "--parsable", *options, *args], "the submission")
    job_id = _job_id(result.stdout)
    job = await reader.job(job_id)
    if comment is not None and job.comment != comment:
        raise VerificationError(f"job {job_id} was submitted but carries comment {job.comment!r}, not {comment!r}")
    return SubmitResult(job_id=job_id, state=job.state, comment=job.comment)


async def set_comment(reader: SlurmReader, job_id: int, comment: str, heartbeat: Heartbeat) -> CommentResult:
    """Set the job's comment unless it already carries it; verified by reading it back."""
    job_id = validate.job_id(job_id)
    comment = validate.comment(comment)
    before = await reader.job(job_id)
    if before.comment == comment:
        return CommentResult(job_id=job_id, changed=False, comment=comment)
    await reader.run(["scontrol", "update", f"JobId={job_id}", f"Comment={comment}"], f"job {job_id}")
    after = await wait_for(
        lambda: reader.job(job_id),
        lambda j: j.comment == comment,
        timeout=reader.verify_timeout,
        what=f"job {job_id} comment set",
        heartbeat=heartbeat,
    )
    return CommentResult(job_id=job_id, changed=True, comment=after.comment)


def _job_id(stdout: str) -> int:
    """The job id of ``sbatch --parsable`` output (``123`` or ``123;cluster``)."""
    first = stdout.strip().split(";")[0].strip()
    try:
        return validate.job_id(first)
    except InvalidArgumentError:
        raise MalformedOutputError(f"sbatch printed no job id: {shorten(stdout)}") from None
