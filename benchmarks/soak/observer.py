"""What Slurm shows while the soak runs, sampled every couple of seconds (skipped while the controller is down).

Recorded: every sample in which a soak job is held (the soak never holds a job, so a hold is Lazarus's restart in
progress or Slurm's own), every change of a soak job's ExcNodeList, and every drain spell of a node with the
ledger's record of that node at the moment the drain was first seen (a later resume rewrites the record, so the
corroboration check reads it from here).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from temporalio.client import Client

from benchmarks.soak.models import DrainSeen, ExclusionSample, HeldSample
from benchmarks.soak.stack import ChaosStack
from lazarus.models import names
from lazarus.models.slurm import JobState
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.transport import LocalTransport

READ_TIMEOUT_S = 10.0


async def ledger_view(client: Client, cluster: str, timeout: float = 10.0) -> dict[str, Any] | None:
    """The node ledger's view as raw JSON (read leniently: fields added later are kept), None if unreadable."""
    try:
        async with asyncio.timeout(timeout):
            view = await client.get_workflow_handle(names.ledger_id(cluster)).query(names.LEDGER_VIEW)
    except Exception:
        return None
    return view if isinstance(view, dict) else None


def ledger_record(view: dict[str, Any] | None, node: str) -> dict[str, Any] | None:
    for record in (view or {}).get("nodes", []):
        if record.get("node") == node:
            return record
    return None


def _settled(record: dict[str, Any] | None) -> bool:
    """The ledger's record shows the drain (by Lazarus or by someone else)."""
    return bool(record) and bool(record.get("drained_by_lazarus") or record.get("drained_by"))


@dataclass
class Observer:
    stack: ChaosStack
    client: Client
    job_ids: set[int]
    held: list[HeldSample] = field(default_factory=list)
    exclusions: list[ExclusionSample] = field(default_factory=list)
    drains: list[DrainSeen] = field(default_factory=list)
    drained_since: dict[str, datetime] = field(default_factory=dict)
    users: dict[int, str] = field(default_factory=dict)
    last_states: dict[int, JobState] = field(default_factory=dict)
    samples: int = 0
    missed: int = 0

    def __post_init__(self) -> None:
        self.reader = SlurmReader(LocalTransport(self.stack.slurm_conf), command_timeout=READ_TIMEOUT_S)
        self._last_excluded: dict[int, list[str]] = {}
        self._spell: dict[str, DrainSeen] = {}  # node -> its current drain spell

    async def sample(self) -> None:
        asked = datetime.now(UTC)
        try:
            jobs = await self.reader.jobs()
            nodes = await self.reader.nodes()
        except Exception:
            self.missed += 1
            return
        now = datetime.now(UTC)  # a read during a controller outage answers (with fresh state) once it is back
        self.samples += 1
        for job in jobs:
            if job.user:
                self.users[job.job_id] = job.user
            if job.job_id not in self.job_ids:
                continue
            self.last_states[job.job_id] = job.state
            if job.held:
                self.held.append(HeldSample(job_id=job.job_id, at=now, asked_at=asked, reason=job.state_reason))
            if job.excluded_nodes and job.excluded_nodes != self._last_excluded.get(job.job_id):
                self.exclusions.append(ExclusionSample(job_id=job.job_id, at=now, nodes=job.excluded_nodes))
            self._last_excluded[job.job_id] = job.excluded_nodes
        for node in nodes:
            if not node.drained:
                self.drained_since.pop(node.name, None)
                self._spell.pop(node.name, None)
                continue
            if node.name not in self.drained_since:
                self.drained_since[node.name] = now
                self._spell[node.name] = DrainSeen(node=node.name, reason=node.reason, first_seen=now)
                self.drains.append(self._spell[node.name])
            seen = self._spell[node.name]
            if not _settled(seen.ledger_record):  # the ledger records its drain just after Slurm shows it
                seen.ledger_record = ledger_record(await ledger_view(self.client, self.stack.cluster), node.name)

    async def held_now(self) -> list[HeldSample]:
        """Soak jobs held at this moment (the end check); [] when Slurm does not answer."""
        now = datetime.now(UTC)
        try:
            jobs = await self.reader.jobs()
        except Exception:
            return []
        return [
            HeldSample(job_id=j.job_id, at=now, reason=j.state_reason)
            for j in jobs
            if j.job_id in self.job_ids and j.held
        ]
