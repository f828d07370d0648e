"""The soak's operator: answers monitor-mode advice through the real approval API, and returns drained nodes to
service so the small cluster keeps its capacity.

For each advice awaiting approval it draws (seeded) an answer: approve, reject, or none (the advice expires), a
delay within the decision deadline, and a channel: the `lazarus advice` CLI, a Temporal update, or a signal of
the same name. Each decision carries a unique operator name so that the advice's ``decided_by`` shows whether it
was applied. Whether Temporal accepted it is recorded as the channel reports it: the CLI's exit status, the
update's reply or refusal, the signal call returning; a call cut off by a fault is recorded as unknown.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import Client, WorkflowUpdateFailedError

from benchmarks.soak.models import DecisionSent
from benchmarks.soak.stack import REPO, ChaosStack
from lazarus.models import names
from lazarus.models.ledger import ResumeRequest
from lazarus.models.recovery import AdviceStatus, Approval, DecisionReply, JobStatus, Rejection
from lazarus.models.slurm import NodeActionResult
from lazarus.slurm.transport import LocalTransport

ANSWERS: dict[str | None, int] = {"approve": 45, "reject": 30, None: 25}
CHANNELS = {"update": 50, "cli": 25, "signal": 25}
CALL_TIMEOUT_S = 20.0
CLI_TIMEOUT_S = 60.0
RESUME_AFTER_S = 25.0


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class Scheduled:
    """The answer drawn for one advice; ``verb`` None lets it expire."""

    due: datetime
    verb: str | None
    channel: str
    expires_at: datetime | None
    sent: bool = False


@dataclass
class Operator:
    stack: ChaosStack
    client: Client
    rng: random.Random
    decisions: list[DecisionSent] = field(default_factory=list)
    scheduled: dict[tuple[int, int], Scheduled] = field(default_factory=dict)
    resumes: list[str] = field(default_factory=list)
    resumed_spells: set[tuple[str, datetime]] = field(default_factory=set)
    tasks: set[asyncio.Task] = field(default_factory=set)

    async def tick(self) -> None:
        """Draw an answer for every new pending advice; send the answers that are due."""
        now = utcnow()
        for status in await self._awaiting():
            advice = status.advice
            key = (status.job_id, advice.generation) if advice else None
            if advice is None or advice.status != AdviceStatus.PENDING or key in self.scheduled:
                continue
            verb = self.rng.choices(list(ANSWERS), weights=list(ANSWERS.values()))[0]
            channel = self.rng.choices(list(CHANNELS), weights=list(CHANNELS.values()))[0]
            due = now + timedelta(seconds=self.rng.uniform(1.0, 25.0))
            self.scheduled[key] = Scheduled(due, verb, channel, advice.expires_at)
        for (job_id, generation), item in self.scheduled.items():
            if item.verb is not None and not item.sent and item.due <= now:
                item.sent = True
                self._spawn(self._send(job_id, generation, item))

    async def _awaiting(self) -> list[JobStatus]:
        """Statuses of this cluster's workflows awaiting approval ([] while Temporal does not answer)."""
        query = f'LazarusCluster="{self.stack.cluster}" AND RecoveryState="awaiting-approval"'
        found = []
        try:
            async with asyncio.timeout(CALL_TIMEOUT_S):
                async for wf in self.client.list_workflows(query):
                    handle = self.client.get_workflow_handle(wf.id)
                    found.append(await handle.query(names.JOB_STATUS, result_type=JobStatus))
        except Exception:
            pass
        return found

    async def _send(self, job_id: int, generation: int, item: Scheduled) -> None:
        assert item.verb is not None
        operator = f"chaos-{item.verb}-{job_id}-{generation}-{item.channel}"
        sent_at = utcnow()
        if item.channel == "cli":
            accepted, reply = await self._by_cli(job_id, generation, item.verb, operator)
        else:
            accepted, reply = await self._by_temporal(job_id, generation, item.verb, item.channel, operator)
        self.decisions.append(
            DecisionSent(
                job_id=job_id,
                generation=generation,
                verb=item.verb,
                channel=item.channel,
                operator=operator,  # type: ignore[arg-type]
                sent_at=sent_at,
                expires_at=item.expires_at,
                accepted=accepted,
                reply=reply[:300],
            )
        )

    async def _by_temporal(
        self, job_id: int, generation: int, verb: str, channel: str, operator: str
    ) -> tuple[bool | None, str]:
        model = Approval if verb == "approve" else Rejection
        answer = model(generation=generation, operator=operator, comment="chaos soak")
        name = names.APPROVE_ADVICE if verb == "approve" else names.REJECT_ADVICE
        handle = self.client.get_workflow_handle(names.workflow_id(self.stack.cluster, job_id))
        try:
            async with asyncio.timeout(CALL_TIMEOUT_S):
                if channel == "signal":
                    await handle.signal(name, answer)
                    return True, "signal delivered"
                reply = await handle.execute_update(name, answer, result_type=DecisionReply)
                return True, reply.message
        except WorkflowUpdateFailedError as exc:
            return False, f"refused: {exc.cause}"
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"

    async def _by_cli(self, job_id: int, generation: int, verb: str, operator: str) -> tuple[bool | None, str]:
        env = dict(os.environ, LAZARUS_CONFIG=str(self.stack.config_path))
        argv = [
            sys.executable,
            "-m",
            "lazarus.cli.main",
            "advice",
            verb,
            str(job_id),
            "--generation",
            str(generation),
            "--operator",
            operator,
            "--comment",
            "chaos soak",
        ]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=REPO,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), CLI_TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return None, f"the CLI did not answer within {CLI_TIMEOUT_S:.0f} s"
        text = (out + err).decode(errors="replace").strip()
        if proc.returncode == 0:
            return True, text
        return (False if "refused" in text else None), text

    async def resume_drained(self, drained_since: dict[str, datetime]) -> None:
        """Return nodes drained for a while to service: through the ledger (as `lazarus nodes resume` does),
        or with scontrol when the ledger does not answer; their fake GPUs are repaired, as a technician would."""
        now = utcnow()
        for node, since in list(drained_since.items()):  # the observer samples while a resume is in flight
            if (now - since).total_seconds() < RESUME_AFTER_S or (node, since) in self.resumed_spells:
                continue
            request = ResumeRequest(node=node, operator="chaos-operator", comment="the soak keeps capacity")
            handle = self.client.get_workflow_handle(names.ledger_id(self.stack.cluster))
            try:
                async with asyncio.timeout(CALL_TIMEOUT_S):
                    await handle.execute_update(names.RESUME_NODE, request, result_type=NodeActionResult)
                self.resumes.append(f"{now:%H:%M:%S} {node} via the ledger")
                self.resumed_spells.add((node, since))
                self.stack.repair_gpus(node)
                continue
            except Exception:
                pass
            transport = LocalTransport(self.stack.slurm_conf)
            try:
                result = await transport.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], CALL_TIMEOUT_S)
                if result.returncode == 0:
                    self.resumes.append(f"{now:%H:%M:%S} {node} via scontrol")
                    self.resumed_spells.add((node, since))
                    self.stack.repair_gpus(node)
            except Exception:
                pass

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def finish(self) -> None:
        """Wait for the answers in flight."""
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
