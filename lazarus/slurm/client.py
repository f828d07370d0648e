"""SlurmClient: validated reads and verified, idempotent actions over one transport.

Reads return the models of :mod:`lazarus.models.slurm`. Every action follows
the same discipline, so a retry after a crash at any point is safe: read
fresh state, act only if still needed, then read again until the intended
result shows (or raise a retryable :class:`VerificationError`). The restart
and node actions live in their own modules; this class is their entry point.
"""

from __future__ import annotations

from lazarus.config import SchedulerSettings
from lazarus.models.slurm import (
    JobActionResult,
    JobSnapshot,
    NodeAction,
    NodeActionResult,
    NodeState,
    RestartRequest,
    RestartResult,
    SacctRecord,
)
from lazarus.slurm import node_actions, restart, validate
from lazarus.slurm.errors import UnknownJobError
from lazarus.slurm.outcome import check
from lazarus.slurm.parse import SACCT_FORMAT, parse_sacct, parse_scontrol_jobs, parse_scontrol_nodes
from lazarus.slurm.parse_squeue import parse_squeue_json
from lazarus.slurm.transport import CommandResult, Transport, build_transport
from lazarus.slurm.waiting import Heartbeat, no_heartbeat, wait_for


class SlurmClient:
    """Slurm reads and actions. ``verify_timeout`` bounds how long an action waits to see its result."""

    def __init__(self, transport: Transport, *, command_timeout: float = 30.0, verify_timeout: float = 30.0) -> None:
        self.transport = transport
        self.command_timeout = command_timeout
        self.verify_timeout = verify_timeout

    @classmethod
    def from_settings(cls, settings: SchedulerSettings) -> "SlurmClient":
        return cls(build_transport(settings), command_timeout=settings.command_timeout_s)

    async def close(self) -> None:
        await self.transport.close()

    async def run(self, argv: list[str], subject: str) -> CommandResult:
        """Run one command (arguments already validated); a non-zero exit raises its typed error."""
        return check(await self.transport.run(argv, self.command_timeout), subject)

    # ------------------------------------------------------------------ reads

    async def jobs(self) -> list[JobSnapshot]:
        """Every job slurmctld holds (running, pending, and finished within MinJobAge): one command."""
        return parse_squeue_json((await self.run(["squeue", "--json"], "the job list")).stdout)

    async def job(self, job_id: int) -> JobSnapshot:
        """One job, with the expanded StdOut path; :class:`UnknownJobError` when Slurm does not know it."""
        job_id = validate.job_id(job_id)
        result = await self.run(["scontrol", "show", "job", str(job_id)], f"job {job_id}")
        matches = [job for job in parse_scontrol_jobs(result.stdout) if job.job_id == job_id]
        if len(matches) != 1:
            raise UnknownJobError(f"Slurm does not know job {job_id} (scontrol returned {len(matches)} records)")
        return matches[0]

    async def attempts(self, job_id: int) -> list[SacctRecord]:
        """The job's attempts from accounting, oldest first, ``attempt`` set to the index.

        Empty when accounting has no row yet (it trails the controller by a
        second or two) or the job is unknown to it.
        """
        job_id = validate.job_id(job_id)
        argv = ["sacct", "-P", "-n", "-D", "-X", "-j", str(job_id), "-o", SACCT_FORMAT]
        rows = [r for r in parse_sacct((await self.run(argv, f"job {job_id}")).stdout) if r.job_id == str(job_id)]
        return [row.model_copy(update={"attempt": index}) for index, row in enumerate(rows)]

    async def nodes(self) -> list[NodeState]:
        """Every node of the cluster with its state and reason."""
        return parse_scontrol_nodes((await self.run(["scontrol", "show", "node"], "the node list")).stdout)

    # ------------------------------------------------------------------ job actions

    async def restart_excluding(self, request: RestartRequest, heartbeat: Heartbeat = no_heartbeat) -> RestartResult:
        """Requeue the job's current attempt so the next one avoids ``exclude_nodes``; see :mod:`.restart`."""
        return await restart.restart_excluding(self, request, heartbeat)

    async def cancel(self, job_id: int, heartbeat: Heartbeat = no_heartbeat) -> JobActionResult:
        """Cancel the job unless it has already finished; verified by reading a finished state back."""
        before = await self.job(job_id)
        if before.state.finished:
            return JobActionResult(job_id=before.job_id, changed=False, state=before.state, held=before.held)
        await self.run(["scancel", str(before.job_id)], f"job {before.job_id}")
        after = await wait_for(
            lambda: self.job(before.job_id), lambda j: j.state.finished,
            timeout=self.verify_timeout, what=f"job {before.job_id} cancelled", heartbeat=heartbeat,
        )
        return JobActionResult(job_id=after.job_id, changed=True, state=after.state, held=after.held)

    async def release(self, job_id: int, heartbeat: Heartbeat = no_heartbeat) -> JobActionResult:
        """Release a held job (fail-open path: Lazarus never leaves a job held); no-op when not held."""
        before = await self.job(job_id)
        if not before.held:
            return JobActionResult(job_id=before.job_id, changed=False, state=before.state, held=False)
        await self.run(["scontrol", "release", str(before.job_id)], f"job {before.job_id}")
        after = await wait_for(
            lambda: self.job(before.job_id), lambda j: not j.held,
            timeout=self.verify_timeout, what=f"job {before.job_id} released", heartbeat=heartbeat,
        )
        return JobActionResult(job_id=after.job_id, changed=True, state=after.state, held=after.held)

    # ------------------------------------------------------------------ node actions

    async def drain(self, action: NodeAction, heartbeat: Heartbeat = no_heartbeat) -> NodeActionResult:
        """Drain nodes (running jobs finish, no new work lands); nodes already draining are left alone."""
        return await node_actions.drain(self, action, heartbeat)

    async def resume(self, action: NodeAction, heartbeat: Heartbeat = no_heartbeat) -> NodeActionResult:
        """Return drained or down nodes to service; nodes already in service are left alone."""
        return await node_actions.resume(self, action, heartbeat)
