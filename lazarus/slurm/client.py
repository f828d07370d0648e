"""SlurmClient: validated reads and verified, idempotent actions over one transport.

Reads (from :class:`lazarus.slurm.reads.SlurmReader`) return the models of
:mod:`lazarus.models.slurm`. Every action follows the same discipline, so a
retry after a crash at any point is safe: read fresh state, act only if still
needed, then read again until the intended result shows (or raise a
retryable :class:`VerificationError`). The restart, cancel, node and submission
actions live in their own modules, which see only the reader; this class
composes them and is their entry point.
"""

from __future__ import annotations

from lazarus.config import SchedulerSettings
from lazarus.models.slurm import (
    CancelRequest,
    CancelResult,
    CommentResult,
    JobActionResult,
    LiftRequest,
    LiftResult,
    NodeAction,
    NodeActionResult,
    ReleaseRequest,
    RestartRequest,
    RestartResult,
    SubmitRequest,
    SubmitResult,
)
from lazarus.models.spares import RefillRequest, RefillResult
from lazarus.slurm import cancel, expedite, node_actions, reservations, restart, submission
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.transport import LocalTransport, Transport
from lazarus.slurm.waiting import Heartbeat, no_heartbeat, wait_for


def build_transport(settings: SchedulerSettings) -> Transport:
    """The transport the scheduler settings ask for."""
    if settings.transport == "ssh":
        # Imported here so a local-only worker never loads asyncssh's crypto stack.
        from lazarus.slurm.ssh import SshTransport

        assert settings.ssh is not None  # guaranteed by SchedulerSettings' validator
        return SshTransport(settings.ssh, slurm_conf=settings.slurm_conf)
    return LocalTransport(settings.slurm_conf)


class SlurmClient(SlurmReader):
    """Slurm reads and actions. ``verify_timeout`` bounds how long an action waits to see its result."""

    @classmethod
    def from_settings(cls, settings: SchedulerSettings) -> SlurmClient:
        """The service's client: the transport (local or SSH) the settings ask for."""
        return cls(build_transport(settings), command_timeout=settings.command_timeout_s)

    @classmethod
    def local(cls, settings: SchedulerSettings, *, command_timeout: float) -> SlurmClient:
        """A client that runs commands on this host as the calling user (the CLI acts for its user).

        Never the service's SSH login: a job a person submits must be theirs.
        """
        return cls(LocalTransport(settings.slurm_conf), command_timeout=command_timeout)

    # ------------------------------------------------------------------ job actions

    async def submit(self, request: SubmitRequest) -> SubmitResult:
        """Submit a batch job with the comment of ``request``; see :mod:`.submission` (never retried)."""
        return await submission.submit(self, request)

    async def set_comment(self, job_id: int, comment: str, heartbeat: Heartbeat = no_heartbeat) -> CommentResult:
        """Set a job's comment (the Lazarus opt-in) unless it carries it already; verified by reading it back."""
        return await submission.set_comment(self, job_id, comment, heartbeat)

    async def restart_excluding(self, request: RestartRequest, heartbeat: Heartbeat = no_heartbeat) -> RestartResult:
        """Requeue the job's current attempt so the next one avoids ``exclude_nodes``; see :mod:`.restart`."""
        return await restart.restart_excluding(self, request, heartbeat)

    async def lift_expedite(self, request: LiftRequest, heartbeat: Heartbeat = no_heartbeat) -> LiftResult:
        """Set an expedited attempt's priority back once it runs (see :mod:`lazarus.slurm.expedite`)."""
        return await expedite.lift(self, request, heartbeat)

    async def cancel(self, job_id: int, heartbeat: Heartbeat = no_heartbeat) -> JobActionResult:
        """Cancel the job unless it has already finished; verified by reading a finished state back."""
        before = await self.job(job_id)
        if before.state.finished:
            return JobActionResult(job_id=before.job_id, changed=False, state=before.state, held=before.held)
        await self.run(["scancel", str(before.job_id)], f"job {before.job_id}")
        after = await wait_for(
            lambda: self.job(before.job_id),
            lambda j: j.state.finished,
            timeout=self.verify_timeout,
            what=f"job {before.job_id} cancelled",
            heartbeat=heartbeat,
        )
        return JobActionResult(job_id=after.job_id, changed=True, state=after.state, held=after.held)

    async def cancel_attempt(self, request: CancelRequest, heartbeat: Heartbeat = no_heartbeat) -> CancelResult:
        """Stop means stop: cancel the attempt a stop was decided for, if it still holds its allocation (fresh
        read first, verified after); see :mod:`.cancel`."""
        return await cancel.cancel_attempt(self, request, heartbeat)

    async def release(self, job_id: int, heartbeat: Heartbeat = no_heartbeat) -> JobActionResult:
        """Release a held job (fail-open path: Lazarus never leaves a job held); no-op when not held."""
        before = await self.job(job_id)
        if not before.held:
            return JobActionResult(job_id=before.job_id, changed=False, state=before.state, held=False)
        await self.run(["scontrol", "release", str(before.job_id)], f"job {before.job_id}")
        after = await wait_for(
            lambda: self.job(before.job_id),
            lambda j: not j.held,
            timeout=self.verify_timeout,
            what=f"job {before.job_id} released",
            heartbeat=heartbeat,
        )
        return JobActionResult(job_id=after.job_id, changed=True, state=after.state, held=after.held)

    async def release_lazarus_hold(
        self, request: ReleaseRequest, heartbeat: Heartbeat = no_heartbeat
    ) -> JobActionResult:
        """Fail-open: release a hold Lazarus placed on the attempt it was restarting; see :mod:`.restart`."""
        return await restart.release_lazarus_hold(self, request, heartbeat)

    # ------------------------------------------------------------------ node actions

    async def drain(self, action: NodeAction, heartbeat: Heartbeat = no_heartbeat) -> NodeActionResult:
        """Drain nodes (running jobs finish, no new work lands); nodes already draining are left alone."""
        return await node_actions.drain(self, action, heartbeat)

    async def resume(self, action: NodeAction, heartbeat: Heartbeat = no_heartbeat) -> NodeActionResult:
        """Return drained or down nodes to service; nodes already in service are left alone."""
        return await node_actions.resume(self, action, heartbeat)

    # ------------------------------------------------------------------ spare pools

    async def refill_reservation(self, request: RefillRequest, heartbeat: Heartbeat = no_heartbeat) -> RefillResult:
        """Swap a spare pool's untrusted members for healthy idle nodes; see :mod:`.reservations`."""
        return await reservations.refill(self, request, heartbeat)
