"""The fault injector: at random moments (seeded), one fault at a time, each undone before the next.

- ``kill-workers``: kill -9 one worker role or all three, restarted a few seconds later;
- ``kill-temporal``: kill -9 the Temporal dev server, restarted at once on the same SQLite database;
- ``freeze``: SIGSTOP slurmctld, Temporal or a worker for a few seconds to longer than the hang budget, then SIGCONT;
- ``restart-slurmctld``: stop slurmctld, leave the cluster without a controller for a while, start it again;
- ``kill-ssh``: kill the SSH server Slurm commands go through; the embedded stack runs them locally, so this
  fault is skipped, and the output says so.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from benchmarks.soak.models import FaultRecord
from benchmarks.soak.stack import ROLES, ChaosStack

KINDS = ("kill-workers", "kill-temporal", "freeze", "restart-slurmctld")
FREEZE_TARGETS = ("slurmctld", "temporal", *(f"worker:{r}" for r in ROLES))
SSH_SKIPPED = (
    "the embedded stack runs Slurm commands locally (scheduler.transport: local): there is no SSH server to kill"
)


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class FaultInjector:
    stack: ChaosStack
    rng: random.Random
    gap_s: tuple[float, float] = (8.0, 25.0)
    say: Callable[[str], None] = print
    records: list[FaultRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.records.append(
            FaultRecord(kind="kill-ssh", target="sshd", started_at=utcnow(), skipped=True, detail=SSH_SKIPPED)
        )
        self.say(f"fault kill-ssh: skipped: {SSH_SKIPPED}")

    async def run(self, stop_at: float) -> None:
        """Inject faults until the monotonic time ``stop_at``."""
        while True:
            await asyncio.sleep(self.rng.uniform(*self.gap_s))
            if time.monotonic() >= stop_at:
                return
            kind = self.rng.choice(KINDS)
            record = FaultRecord(kind=kind, target="", started_at=utcnow())
            t0 = time.monotonic()
            try:
                await getattr(self, "_" + kind.replace("-", "_"))(record)
            except Exception as exc:
                record.detail = f"{record.detail} (error: {type(exc).__name__}: {exc})".strip()
            record.ended_at, record.seconds = utcnow(), round(time.monotonic() - t0, 1)
            self.records.append(record)
            self.say(f"fault {record.kind} {record.target}: {record.seconds:.1f} s {record.detail}".rstrip())

    async def _kill_workers(self, record: FaultRecord) -> None:
        roles = list(ROLES) if self.rng.random() < 0.5 else [self.rng.choice(ROLES)]
        record.target = ",".join(roles)
        for role in roles:
            self.stack.kill_worker(role)
        down = self.rng.uniform(0.5, 5.0)
        await asyncio.sleep(down)
        for role in roles:
            self.stack.start_worker(role)
        record.detail = f"down {down:.1f} s"

    async def _kill_temporal(self, record: FaultRecord) -> None:
        record.target = "temporal"
        pid = await asyncio.to_thread(self.stack.kill9, "temporal")
        await asyncio.to_thread(self.stack.ensure, "temporal")
        record.detail = f"pid {pid}, restarted on the same database"

    async def _freeze(self, record: FaultRecord) -> None:
        target = self.rng.choice(FREEZE_TARGETS)
        seconds = self.rng.uniform(2.0, 25.0)
        record.target = target
        pid = self.stack.freeze(target)
        try:
            await asyncio.sleep(seconds)
        finally:
            self.stack.thaw(target)
        record.detail = f"SIGSTOP pid {pid} for {seconds:.1f} s" if pid else "nothing to freeze (down)"

    async def _restart_slurmctld(self, record: FaultRecord) -> None:
        record.target = "slurmctld"
        await asyncio.to_thread(self.stack.stop, "slurmctld")
        down = self.rng.uniform(2.0, 15.0)
        await asyncio.sleep(down)
        await asyncio.to_thread(self.stack.ensure, "slurmctld")
        record.detail = f"down {down:.1f} s"
