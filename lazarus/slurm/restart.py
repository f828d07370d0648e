"""Restart-with-exclusions: ``requeuehold`` → ``update ExcNodeList=`` → ``release``, safe to retry.

Why three steps: Slurm only changes ExcNodeList on a *pending* job ("Job is
no longer pending execution" otherwise), so the running attempt is requeued
in the held state, its exclusions are updated while it cannot start, and it
is released.

Why it is idempotent: the guard is the attempt index, Slurm's ``Restarts``,
which rises by one at the moment of ``requeuehold`` (measured on 22.05).
``expected_attempt`` names the attempt being replaced. If the job already
shows ``Restarts > expected_attempt``, the requeue happened (a previous try
that crashed, or Slurm itself after a node failure) and is never repeated:
the retry only finishes the update and the release. Every step reads fresh
state first, so a crash between any two commands leaves nothing that the
next try cannot finish.

Fresh state decides: an attempt that has completed or been cancelled by the
time the action reads it is left alone (``not_done_reason``), however it was
decided or approved; Lazarus never requeues such a job.

Fail-open: if a step after the hold fails permanently, the job is released
before the error propagates; Lazarus never leaves a job held. It releases
only holds of its own kind (a requeue-hold, or an operator's hold of a pending
job, see :func:`lazarus_hold`), never a user's own hold.

Expedite (``request.expedite``): after the release, the pending new attempt is put at the top of its
partition's queue (:mod:`.expedite`); the result says what was done, read back.

A dead node (``request.lost_nodes``, found by Lazarus's liveness) under the attempt is first set DOWN when its
slurmd does not answer either (:mod:`lazarus.slurm.node_down`): Slurm then ends the attempt as a node failure and
requeues the job itself, as it would ``SlurmdTimeout`` later, and the restart finishes as for any job Slurm
requeued (exclusions, release). A requeue-hold first would leave the job COMPLETING on the dead node.

Truthful result: ``exclusions_applied`` says whether the new attempt carries
the exclusions; when it does not (Slurm had already requeued the job and its
new attempt was running), ``exclusions_not_applied_reason`` says why.
"""

from __future__ import annotations

from lazarus.models.slurm import JobActionResult, JobSnapshot, JobState, ReleaseRequest, RestartRequest, RestartResult
from lazarus.slurm import validate
from lazarus.slurm.errors import OperationRefusedError, SlurmError, UnknownNodeError, VerificationError
from lazarus.slurm.expedite import expedite
from lazarus.slurm.node_down import down_lost_nodes
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.waiting import Heartbeat, wait_for

# States a requeued job passes through before it is PENDING and can be updated.
_IN_TRANSITION = frozenset({JobState.COMPLETING, JobState.REQUEUED, JobState.REQUEUE_HOLD, JobState.REQUEUE_FED})
# Ended states that Lazarus never requeues: the job's work is done, or someone decided it should stop.
_LEAVE_ALONE = {JobState.COMPLETED: "completed", JobState.CANCELLED: "was cancelled"}
# The reasons Slurm gives for the holds Lazarus places: `scontrol requeuehold`, and `scontrol hold` of a
# pending job by Lazarus's operator account. A user's own hold reads JobHeldUser and is never lifted.
_LAZARUS_HOLD_REASONS = frozenset({"job_requeued_in_held_state", "JobHeldAdmin"})


def lazarus_hold(job: JobSnapshot) -> bool:
    """Whether the job is held by a hold of the kind Lazarus places (a requeue-hold, or an operator's hold).

    An administrator's ``scontrol hold`` of the same attempt reads the same as Lazarus's own; a user's
    hold (``JobHeldUser``) never does.
    """
    return job.held and job.state_reason in _LAZARUS_HOLD_REASONS


async def restart_excluding(client: SlurmReader, request: RestartRequest, heartbeat: Heartbeat) -> RestartResult:
    """Run (or finish) the restart of ``request.job_id`` and verify it; see the module docstring."""
    job_id = validate.job_id(request.job_id)
    exclude = validate.node_names(request.exclude_nodes)
    await _check_nodes_exist(client, exclude)
    heartbeat(f"job {job_id}: nodes checked")
    job = await client.job(job_id)
    heartbeat(f"job {job_id}: read")
    if job.restarts < request.expected_attempt:
        raise OperationRefusedError(
            f"job {job_id} is at attempt {job.restarts}, before the attempt {request.expected_attempt} "
            "this restart was meant to replace; refusing to act on a stale request"
        )
    already_done = job.restarts > request.expected_attempt
    if not already_done:
        if job.state is JobState.COMPLETING:  # ending: how it ends decides whether it may be requeued
            job = await _settle(client, job_id, heartbeat)
        if job.state in _LEAVE_ALONE and job.restarts == request.expected_attempt:
            return _left_alone(job)
    # A job still pending for its first run of this attempt has nothing to requeue: it is held,
    # updated and released, and keeps its attempt index.
    target_attempt = (
        request.expected_attempt
        if (job.state is JobState.PENDING and not already_done)
        else (request.expected_attempt + 1)
    )
    if request.lost_nodes and not already_done and await down_lost_nodes(client, job, request.lost_nodes, heartbeat):
        # the dead node is DOWN: Slurm ends the attempt as a node failure and requeues the job itself
        job = await _requeued_by_slurm(client, job_id, request.expected_attempt, heartbeat)
        already_done = job.restarts > request.expected_attempt
        target_attempt = request.expected_attempt + 1
    if not already_done:
        await _hold(client, job, heartbeat)
    job = await _settle(client, job_id, heartbeat)
    if job.state is JobState.PENDING:
        try:
            await _exclude(client, job, exclude, heartbeat)
        except SlurmError as exc:
            if not exc.retryable:
                await _release(client, job_id, heartbeat)  # fail-open: never leave the job held on a permanent error
            raise
        await _release(client, job_id, heartbeat)
    heartbeat(f"job {job_id}: released, verifying")
    result = await _verify(client, request, exclude, target_attempt, already_done, heartbeat)
    if request.expedite:  # after the release: setting a priority on a held job would release it
        result.expedite = await expedite(client, job_id, result.new_attempt, heartbeat)
    return result


async def release_lazarus_hold(client: SlurmReader, request: ReleaseRequest, heartbeat: Heartbeat) -> JobActionResult:
    """Fail-open release: lift a hold Lazarus placed while restarting ``request.attempt``, and nothing else.

    The job must still be on that attempt (a pending one Lazarus held) or the next (its requeue-hold),
    pending, and held by a hold of Lazarus's kind. A job that moved on, ended, or is held by its user
    is left as it is (``changed`` False).
    """
    job = await client.job(validate.job_id(request.job_id))
    heartbeat(f"job {job.job_id}: read before the fail-open release")
    ours = job.restarts in (request.attempt, request.attempt + 1) and job.state is JobState.PENDING
    if not (ours and lazarus_hold(job)):
        return JobActionResult(job_id=job.job_id, changed=False, state=job.state, held=job.held)
    await client.run(["scontrol", "release", str(job.job_id)], f"job {job.job_id}")
    after = await wait_for(
        lambda: client.job(job.job_id),
        lambda j: not j.held,
        timeout=client.verify_timeout,
        what=f"job {job.job_id} released",
        heartbeat=heartbeat,
    )
    return JobActionResult(job_id=after.job_id, changed=True, state=after.state, held=after.held)


def _left_alone(job: JobSnapshot) -> RestartResult:
    """The attempt had ended in a state Lazarus never requeues: report it, touching nothing."""
    return RestartResult(
        job_id=job.job_id,
        new_attempt=job.restarts,
        excluded_nodes=job.excluded_nodes,
        state=job.state,
        exit_code=job.exit_code,
        exclusions_applied=False,
        not_done_reason=f"job {job.job_id} {_LEAVE_ALONE[job.state]} in attempt {job.restarts} before the restart; "
        "Lazarus never requeues a completed or cancelled job",
        exclusions_not_applied_reason="the job was not restarted",
    )


async def _check_nodes_exist(client: SlurmReader, names: list[str]) -> None:
    """Refuse unknown nodes *before* the hold: Slurm would reject the update after the job was requeued."""
    if not names:
        return
    known = {node.name for node in await client.nodes()}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UnknownNodeError(f"cannot exclude {', '.join(unknown)}: not a node of this cluster")


async def _hold(client: SlurmReader, job: JobSnapshot, heartbeat: Heartbeat) -> None:
    """Requeue a started attempt held; hold a still-pending one (it has no attempt to requeue)."""
    if job.state is JobState.PENDING:
        if not job.held:
            await client.run(["scontrol", "hold", str(job.job_id)], f"job {job.job_id}")
    else:
        await client.run(["scontrol", "requeuehold", str(job.job_id)], f"job {job.job_id}")
    heartbeat(f"job {job.job_id}: held")


async def _requeued_by_slurm(client: SlurmReader, job_id: int, attempt: int, heartbeat: Heartbeat) -> JobSnapshot:
    """After a node under the attempt was set DOWN: until Slurm has requeued the job (or ended it, when it may
    not be requeued)."""
    return await wait_for(
        lambda: client.job(job_id),
        lambda j: j.restarts > attempt or (j.state.finished and j.state not in _IN_TRANSITION),
        timeout=client.verify_timeout,
        what=f"job {job_id} requeued by Slurm after its node went DOWN",
        heartbeat=heartbeat,
    )


async def _settle(client: SlurmReader, job_id: int, heartbeat: Heartbeat) -> JobSnapshot:
    """Wait until a requeued job has left COMPLETING (its old processes are gone) and is PENDING."""
    return await wait_for(
        lambda: client.job(job_id),
        lambda j: j.state not in _IN_TRANSITION,
        timeout=client.verify_timeout,
        what=f"job {job_id} requeued and pending",
        heartbeat=heartbeat,
    )


async def _exclude(client: SlurmReader, job: JobSnapshot, exclude: list[str], heartbeat: Heartbeat) -> None:
    """Add ``exclude`` to the job's ExcNodeList (keeping earlier exclusions) unless it holds them already."""
    if not exclude or set(exclude) <= set(job.excluded_nodes):
        return
    if not job.held:
        # A pending job could be scheduled between our read and the update; hold it first.
        await client.run(["scontrol", "hold", str(job.job_id)], f"job {job.job_id}")
        heartbeat(f"job {job.job_id}: held for the update")
    wanted = validate.hostlist_expr(sorted(set(job.excluded_nodes) | set(exclude)))
    await client.run(["scontrol", "update", f"JobId={job.job_id}", f"ExcNodeList={wanted}"], f"job {job.job_id}")
    heartbeat(f"job {job.job_id}: excluded {wanted}")


async def _release(client: SlurmReader, job_id: int, heartbeat: Heartbeat) -> None:
    """Release the job if a hold of Lazarus's kind holds it (never a user's own hold)."""
    job = await client.job(job_id)
    heartbeat(f"job {job_id}: read before release")
    if lazarus_hold(job):
        await client.run(["scontrol", "release", str(job_id)], f"job {job_id}")


async def _verify(
    client: SlurmReader,
    request: RestartRequest,
    exclude: list[str],
    target_attempt: int,
    already_done: bool,
    heartbeat: Heartbeat,
) -> RestartResult:
    """Fresh state must show the new attempt, not held, exclusions in place; optionally running elsewhere.

    A job that Slurm itself had already requeued and started again (before
    this request) cannot take new exclusions without a second requeue, which
    this action never does: it is reported as it is, ``already_done`` set, and
    the caller decides about the new attempt.
    """
    job_id = request.job_id

    def released(j: JobSnapshot) -> bool:
        excluded = set(exclude) <= set(j.excluded_nodes)
        return j.restarts >= target_attempt and not lazarus_hold(j) and (excluded or j.state is not JobState.PENDING)

    job = await wait_for(
        lambda: client.job(job_id),
        released,
        timeout=client.verify_timeout,
        what=f"job {job_id} released with {exclude} excluded",
        heartbeat=heartbeat,
    )
    exclusions_in_place = set(exclude) <= set(job.excluded_nodes)
    if request.wait_running_s > 0 and exclusions_in_place:
        job = await wait_for(
            lambda: client.job(job_id),
            lambda j: j.state.finished or _running_elsewhere(j, exclude),
            timeout=request.wait_running_s,
            what=f"job {job_id} running on nodes other than {exclude}",
            heartbeat=heartbeat,
        )
    if exclusions_in_place and job.state is JobState.RUNNING and set(job.nodes) & set(exclude):
        raise VerificationError(f"job {job_id} runs on excluded node(s) {sorted(set(job.nodes) & set(exclude))}")
    return RestartResult(
        job_id=job_id,
        new_attempt=job.restarts,
        excluded_nodes=job.excluded_nodes,
        already_done=already_done,
        state=job.state,
        nodes=job.nodes if job.state is JobState.RUNNING else [],
        exclusions_applied=exclusions_in_place,
        exclusions_not_applied_reason=None if exclusions_in_place else _not_applied(job, exclude),
    )


def _not_applied(job: JobSnapshot, exclude: list[str]) -> str:
    missing = ",".join(sorted(set(exclude) - set(job.excluded_nodes)))
    where = f" on {','.join(job.nodes)}" if job.nodes else ""
    return (
        f"{missing} not excluded: attempt {job.restarts} had already been requeued and was "
        f"{job.state.value.lower()}{where} when Lazarus acted; Slurm changes a job's excluded nodes only "
        "while it is pending, and Lazarus never requeues an attempt twice"
    )


def _running_elsewhere(job: JobSnapshot, exclude: list[str]) -> bool:
    return job.state is JobState.RUNNING and not set(job.nodes) & set(exclude)
