"""SlurmReader: one transport, the typed command runner and the reads every action builds on.

The actions (:mod:`.restart`, :mod:`.node_actions`, :mod:`.submission`) depend
on this class only, never on :class:`lazarus.slurm.client.SlurmClient`, which
composes them: so the adapter has no import cycle.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from lazarus import metrics
from lazarus.models.slurm import JobSnapshot, NodeState, SacctRecord
from lazarus.models.spares import Reservation
from lazarus.slurm import validate
from lazarus.slurm.errors import UnknownJobError
from lazarus.slurm.outcome import check
from lazarus.slurm.parse import (
    SACCT_FORMAT,
    parse_sacct,
    parse_scontrol_jobs,
    parse_scontrol_nodes,
    parse_scontrol_reservations,
)
from lazarus.slurm.parse_squeue import parse_squeue_json
from lazarus.slurm.transport import CommandResult, Transport


class SlurmReader:
    """Validated reads over one transport. ``verify_timeout`` bounds how long an action waits to see its result."""

    def __init__(self, transport: Transport, *, command_timeout: float = 30.0, verify_timeout: float = 30.0) -> None:
        self.transport = transport
        self.command_timeout = command_timeout
        self.verify_timeout = verify_timeout

    async def close(self) -> None:
        await self.transport.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    async def run(self, argv: list[str], subject: str) -> CommandResult:
        """Run one command (arguments already validated); a non-zero exit raises its typed error."""
        with metrics.scheduler_command(argv):
            return check(await self.transport.run(argv, self.command_timeout), subject)

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

    async def reservations(self) -> list[Reservation]:
        """Every reservation slurmctld holds, with its nodes."""
        result = await self.run(["scontrol", "show", "reservation"], "the reservation list")
        return parse_scontrol_reservations(result.stdout)
