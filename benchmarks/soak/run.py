"""One soak run: start the stack, keep the job mix running while faults strike, settle, collect, check.

Phases:
1. **up**: the dedicated stack (Slurm as it is, Temporal on a fresh database) and three worker processes; jobs and
   drains left by an earlier run of this cluster are cleared.
2. **load** (``duration`` seconds): a few jobs at a time; every couple of seconds the observer samples Slurm and
   the operator answers advice and returns drained nodes to service; the fault injector strikes at random.
3. **drain**: faults healed (everything thawed and running), no new jobs; the running ones get time to finish,
   then the soak cancels what is left (recorded: those jobs are not held against Lazarus as healthy jobs stopped).
4. **settle**: every job workflow gets a grace period (longer than the decision deadline) to reach a terminal state.
5. **check**: Temporal and Slurm are read for every job and the invariants are evaluated.

Three seeded random streams (jobs, faults, operator) derive from ``seed``, so a change in one does not shift the
others. The stack is stopped at the end unless ``keep_stack``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import platform
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client

from benchmarks.soak.collect import collect
from benchmarks.soak.faults import FaultInjector
from benchmarks.soak.invariants import check_all
from benchmarks.soak.jobs import JobFactory
from benchmarks.soak.models import JobPlan, SoakData, SoakResult
from benchmarks.soak.observer import Observer, ledger_view
from benchmarks.soak.operator import Operator
from benchmarks.soak.stack import DECISION_TIMEOUT_S, ChaosStack
from lazarus.models.slurm import JobState
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.transport import LocalTransport
from lazarus.temporal_client import connect

TICK_S = 2.0
HOLD_GRACE_S = 30.0  # a release delayed by a fault (Temporal or the scheduler worker down) still lands within it
PROGRESS_EVERY_S = 30.0


@dataclass
class SoakOptions:
    duration_s: float = 1800.0
    seed: int = 1
    concurrency: int = 4
    drain_s: float = 100.0
    settle_s: float = DECISION_TIMEOUT_S + 30.0
    keep_stack: bool = False


@dataclass
class Soak:
    opts: SoakOptions
    say: Callable[[str], None] = print
    plans: dict[int, JobPlan] = field(default_factory=dict)
    states: dict[int, JobState] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    operator_stop: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.t0 = time.monotonic()
        self.run_id = f"{self.opts.seed}x{int(time.time()) % 100000:05d}"
        self.stack = ChaosStack(self.run_id)
        self.operating: asyncio.Task | None = None

    def log(self, text: str) -> None:
        self.say(f"[{time.monotonic() - self.t0:6.0f}s] {text}")

    def rng(self, stream: str) -> random.Random:
        return random.Random(f"{self.opts.seed}-{stream}")

    async def run(self) -> SoakResult:
        self.stack.layout.root.mkdir(parents=True, exist_ok=True)
        with open(self.stack.layout.root / ".soak.lock", "a") as lock:  # noqa: ASYNC230 - once, at the start
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RuntimeError(f"another soak is running on {self.stack.layout.root}") from None
            try:
                return await self._run()
            finally:
                for target in list(self.stack.frozen):
                    self.stack.thaw(target)
                self.log("stopping the workers" + ("" if self.opts.keep_stack else " and the stack"))
                await asyncio.to_thread(self.stack.stop_workers if self.opts.keep_stack else self.stack.down)

    async def _run(self) -> SoakResult:
        started = datetime.now(UTC)
        self.log(f"starting the stack: cluster {self.stack.cluster} in {self.stack.layout.root}, run {self.run_id}")
        up = await asyncio.to_thread(self.stack.up)
        self.notes += up.notes
        await self._clear_leftovers()
        self.stack.start_workers()
        await asyncio.to_thread(self.stack.wait_workers_polling)
        client = await connect(self.stack.settings())
        self.log(f"stack up in {time.monotonic() - self.t0:.0f} s; load for {self.opts.duration_s:.0f} s")
        factory = self.factory = JobFactory(self.stack, self.rng("jobs"))
        operator = Operator(self.stack, client, self.rng("operator"))
        observer = Observer(self.stack, client, set())
        injector = FaultInjector(self.stack, self.rng("faults"), say=self.log)
        await self._load(factory, operator, observer, injector)
        await self._drain(factory, operator, observer)
        await self._settle(client)
        return await self._check(client, observer, operator, injector, started)

    async def _clear_leftovers(self) -> None:
        """Cancel jobs an earlier run left on this (dedicated) cluster and return its drained nodes to service."""
        transport = LocalTransport(self.stack.slurm_conf)
        listing = await transport.run(["squeue", "-h", "-o", "%i %j"], 30)
        old = [
            line.split()[0]
            for line in listing.stdout.splitlines()
            if line.split()[1:2] and line.split()[1].startswith("chaos-")
        ]
        if old:
            await transport.run(["scancel", *old], 30)
            self.notes.append(f"cancelled {len(old)} job(s) left by an earlier run")
        for node in await SlurmReader(transport).nodes():
            if node.drained or node.down:
                await transport.run(["scontrol", "update", f"NodeName={node.name}", "State=RESUME"], 30)

    async def _operate(self, operator: Operator, observer: Observer, stop: asyncio.Event) -> None:
        """The operator's own loop: a frozen control worker or Temporal slows its answers, not the sampling."""
        while not stop.is_set():
            t = time.monotonic()
            await operator.tick()
            await operator.resume_drained(observer.drained_since)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, TICK_S - (time.monotonic() - t)))

    async def _tick(self, factory: JobFactory, observer: Observer, submit: bool) -> None:
        for plan in await factory.confirm():
            self._add(plan, observer)
        await observer.sample()
        for job_id, state in observer.last_states.items():
            self.states[job_id] = state
        if submit and len(self.active()) < self.opts.concurrency:
            plan = await factory.submit()
            if plan is not None:
                self._add(plan, observer)

    def _add(self, plan: JobPlan, observer: Observer) -> None:
        self.plans[plan.job_id] = plan
        observer.job_ids.add(plan.job_id)

    def active(self) -> list[int]:
        return [j for j in self.plans if j not in self.states or not self.states[j].finished]

    async def _load(self, factory: JobFactory, operator: Operator, observer: Observer, injector: FaultInjector) -> None:
        stop_at = time.monotonic() + self.opts.duration_s
        faults = asyncio.create_task(injector.run(stop_at))
        self.operating = asyncio.create_task(self._operate(operator, observer, self.operator_stop))
        last_progress = time.monotonic()
        while time.monotonic() < stop_at:
            t = time.monotonic()
            await self._tick(factory, observer, submit=True)
            if t - last_progress >= PROGRESS_EVERY_S:
                last_progress = t
                self.log(
                    f"jobs {len(self.plans)} (active {len(self.active())}), "
                    f"faults {sum(not f.skipped for f in injector.records)}, decisions {len(operator.decisions)}"
                )
            await asyncio.sleep(max(0.0, TICK_S - (time.monotonic() - t)))
        self.log("load over; waiting for the fault in progress to be undone")
        await faults
        started = await asyncio.to_thread(self.stack.heal)
        if started:
            self.notes.append(f"after the load phase the soak had to start: {', '.join(started)}")

    async def _drain(self, factory: JobFactory, operator: Operator, observer: Observer) -> None:
        deadline = time.monotonic() + self.opts.drain_s
        while self.active() and time.monotonic() < deadline:
            t = time.monotonic()
            await self._tick(factory, observer, submit=False)
            await asyncio.sleep(max(0.0, TICK_S - (time.monotonic() - t)))
        self.operator_stop.set()
        if self.operating is not None:
            await self.operating
        await operator.finish()
        left = self.active()
        if left:
            self.log(f"cancelling {len(left)} job(s) still running after {self.opts.drain_s:.0f} s: {left}")
            cancelled_at = datetime.now(UTC)
            await LocalTransport(self.stack.slurm_conf).run(["scancel", *map(str, left)], 30)
            for job_id in left:
                self.plans[job_id] = self.plans[job_id].model_copy(
                    update={"cancelled_by_soak": True, "cancelled_at": cancelled_at}
                )

    async def _settle(self, client: Client) -> None:
        """Until no job workflow of this run is running, or the grace period passes."""
        query = (
            f'LazarusCluster="{self.stack.cluster}" AND ExecutionStatus="Running" '
            f'AND WorkflowType="JobRecoveryWorkflow"'
        )
        deadline = time.monotonic() + self.opts.settle_s
        running: list[str] = []
        while time.monotonic() < deadline:
            try:
                running = [wf.id async for wf in client.list_workflows(query)]
            except Exception:
                running = ["?"]
            if not running:
                break
            await asyncio.sleep(TICK_S)
        if running:
            self.log(f"{len(running)} job workflow(s) still running after {self.opts.settle_s:.0f} s of grace")

    async def _check(
        self, client: Client, observer: Observer, operator: Operator, injector: FaultInjector, started: datetime
    ) -> SoakResult:
        self.log(f"collecting facts on {len(self.plans)} jobs from Temporal and Slurm")
        reader = SlurmReader(LocalTransport(self.stack.slurm_conf))
        facts = await collect(client, reader, self.stack.cluster, list(self.plans.values()), observer.users)
        data = SoakData(
            cluster=self.stack.cluster,
            decision_timeout_s=DECISION_TIMEOUT_S,
            hold_grace_s=HOLD_GRACE_S,
            jobs=facts,
            decisions=operator.decisions,
            held=observer.held,
            held_at_end=await observer.held_now(),
            exclusions=observer.exclusions,
            drains=observer.drains,
            ledger=await ledger_view(client, self.stack.cluster),
            users=observer.users,
        )
        never = [f.plan.job_id for f in facts if f.workflow_status is None]
        if never:
            self.notes.append(f"{len(never)} job(s) never got a workflow (never seen by telemetry): {never[:10]}")
        if self.factory.unconfirmed:
            self.notes.append(f"{len(self.factory.unconfirmed)} sbatch call(s) cut off by faults left no job")
        self.notes.append(
            f"operator: {len(operator.decisions)} decisions, {len(operator.resumes)} node resumes; "
            f"observer: {observer.samples} samples, {observer.missed} missed (controller away)"
        )
        kinds: dict[str, int] = {}
        for plan in self.plans.values():
            key = f"{plan.kind.value}/{plan.mode}"
            kinds[key] = kinds.get(key, 0) + 1
        return SoakResult(
            seed=self.opts.seed,
            duration_s=self.opts.duration_s,
            started_at=started,
            ended_at=datetime.now(UTC),
            machine=machine(),
            jobs=len(self.plans),
            jobs_by_kind=dict(sorted(kinds.items())),
            faults=injector.records,
            decisions=len(operator.decisions),
            invariants=check_all(data),
            notes=self.notes,
            data=data,
        )


def machine() -> str:
    try:
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        mem_kib = int(next(line for line in meminfo if line.startswith("MemTotal")).split()[1])
        mem = f", {mem_kib / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        mem = ""
    return f"{os.cpu_count()} cores{mem}, {platform.platform(terse=True)}"
