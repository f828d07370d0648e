"""A simulated Slurm controller behind the :class:`Transport` interface, for benchmarks and tests only.

Why it exists: the scale benchmark (``benchmarks/scale.py``) watches 1,000 and 10,000 jobs and the correlated
failure hits 200 jobs at once; the local test cluster has 4 nodes. :class:`SimulatedTransport` answers the
commands the adapter sends (``squeue --json``, ``scontrol show job|node``, ``sacct``, ``scontrol
requeuehold|hold|release|update``, ``scancel``) in Slurm 22.05's own output formats, from the in-memory
:class:`SimulatedCluster`, so every parser, action and verification of :mod:`lazarus.slurm` runs unchanged above
it. It is never built from the service's settings: a benchmark or test constructs it and hands it to
:class:`lazarus.slurm.client.SlurmClient` itself.

What it models: nodes that may be shared by many jobs (``OverSubscribe=FORCE``), drain and resume, jobs that run,
fail, are requeued (held, with ``Restarts`` raised at once, as 22.05 does) and start again once released, after
``requeue_delay_s`` (Slurm's BeginTime after a requeue) on nodes that are neither drained, down nor excluded.
What it does not: partitions, priorities, accounting delay, COMPLETING states, and command latency.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import hostlist
from pydantic import BaseModel, ConfigDict, Field

from lazarus import hostlists
from lazarus.models.slurm import JobState
from lazarus.slurm.transport import CommandResult, Transport

HELD_REASON = "job_requeued_in_held_state"
ADMIN_HOLD_REASON = "JobHeldAdmin"


class SimAttempt(BaseModel):
    """One finished attempt, as ``sacct -D`` lists it."""

    model_config = ConfigDict(extra="forbid")

    state: JobState
    exit_code: int = 0
    nodes: list[str]
    start: datetime | None
    end: datetime | None


class SimJob(BaseModel):
    """One job in the simulated controller."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    name: str
    user: str
    user_id: int
    comment: str = "lazarus"
    num_nodes: int = Field(ge=1)
    stdout: str
    state: JobState = JobState.PENDING
    held: bool = False
    reason: str = "None"
    restarts: int = 0
    nodes: list[str] = Field(default_factory=list)
    excluded: list[str] = Field(default_factory=list)
    exit_code: int = 0
    submit_time: datetime
    start_time: datetime | None = None
    end_time: datetime | None = None
    begin_time: datetime | None = Field(None, description="a requeued attempt may start from then (kept once it ran)")
    history: list[SimAttempt] = Field(default_factory=list)


class SimNode(BaseModel):
    """One node: in service, drained (with the reason given) or down."""

    model_config = ConfigDict(extra="forbid")

    name: str
    drain: bool = False
    down: bool = False
    reason: str = ""


StartHook = Callable[[SimJob], None]


class SimulatedCluster:
    """The controller's state and its scheduling pass. ``on_start`` is told of every attempt that starts."""

    def __init__(self, node_names: list[str], *, requeue_delay_s: float = 0.0, partition: str = "sim") -> None:
        self.nodes = {name: SimNode(name=name) for name in node_names}
        self.jobs: dict[int, SimJob] = {}
        self.requeue_delay = timedelta(seconds=requeue_delay_s)
        self.partition = partition
        self.on_start: StartHook | None = None
        self.commands: list[list[str]] = []  # every write command, in order (for invariants)
        self.busy_s = 0.0  # CPU time spent answering commands (to subtract from the worker's)
        self._next_id = 1000

    # ---- what the simulation (not Lazarus) does --------------------------------------------------

    def submit(self, name: str, stdout: str, num_nodes: int, *, user: str, user_id: int, comment: str) -> SimJob:
        self._next_id += 1
        job = SimJob(
            job_id=self._next_id,
            name=name,
            user=user,
            user_id=user_id,
            comment=comment,
            num_nodes=num_nodes,
            stdout=stdout,
            submit_time=_now(),
        )
        self.jobs[job.job_id] = job
        return job

    def start(self, job: SimJob, nodes: list[str]) -> None:
        """Start the job's attempt on ``nodes`` (the scheduler's choice or the simulation's)."""
        job.state, job.nodes, job.held, job.reason = JobState.RUNNING, list(nodes), False, "None"
        job.start_time, job.end_time = _now(), None
        if self.on_start is not None:
            self.on_start(job)

    def end(self, job: SimJob, state: JobState, exit_code: int = 0) -> None:
        """The running attempt ends (the job's processes exited, or its nodes died)."""
        job.state, job.exit_code, job.end_time = state, exit_code, _now()

    def schedule(self) -> list[SimJob]:
        """One scheduling pass: released pending jobs whose begin time has come start on usable nodes."""
        now, started = _now(), list[SimJob]()
        ready = [
            j
            for j in self.jobs.values()
            if j.state is JobState.PENDING and not j.held and not (j.begin_time and j.begin_time > now)
        ]
        if not ready:
            return started
        usable = [n.name for n in self.nodes.values() if not (n.drain or n.down)]
        load = {name: 0 for name in usable}
        for job in self.jobs.values():
            if job.state is JobState.RUNNING:
                for name in job.nodes:
                    if name in load:
                        load[name] += 1
        for job in ready:
            free = sorted((n for n in usable if n not in job.excluded), key=lambda n: (load[n], n))
            if len(free) < job.num_nodes:
                continue
            chosen = free[: job.num_nodes]
            for name in chosen:
                load[name] += 1
            self.start(job, chosen)
            started.append(job)
        return started

    # ---- the commands ------------------------------------------------------------------------------

    def answer(self, argv: list[str]) -> CommandResult:
        """Run one command against the state, in Slurm 22.05's output format (a scheduling pass first)."""
        began = time.thread_time()
        try:
            self.schedule()
            code, out, err = self._dispatch(argv)
        finally:
            self.busy_s += time.thread_time() - began
        return CommandResult(argv=list(argv), returncode=code, stdout=out, stderr=err)

    def _dispatch(self, argv: list[str]) -> tuple[int, str, str]:
        program, args = argv[0], argv[1:]
        if program == "squeue" and args == ["--json"]:
            return 0, self._squeue_json(), ""
        if program == "sacct":
            return 0, self._sacct(int(args[args.index("-j") + 1])), ""
        if program == "scontrol" and args[:2] == ["show", "job"]:
            job = self.jobs.get(int(args[2]))
            return (0, self._show_job(job), "") if job else (1, "", "slurm_load_jobs error: Invalid job id specified")
        if program == "scontrol" and args[:2] == ["show", "node"]:
            busy = {name for j in self.jobs.values() if j.state is JobState.RUNNING for name in j.nodes}
            return 0, "".join(self._show_node(n, n.name in busy) for n in self.nodes.values()), ""
        self.commands.append(list(argv))
        if program == "scancel":
            return self._job_command("cancel", args[0])
        if program == "scontrol" and args and args[0] in ("requeuehold", "hold", "release"):
            return self._job_command(args[0], args[1])
        if program == "scontrol" and args and args[0] == "update":
            return self._update(dict(a.split("=", 1) for a in args[1:]))
        return 1, "", f"simulated Slurm does not know the command {shlex.join(argv)}"

    def _job_command(self, verb: str, raw_id: str) -> tuple[int, str, str]:
        job = self.jobs.get(int(raw_id))
        if job is None:
            return 1, "", "Invalid job id specified"
        if verb == "cancel":
            if not job.state.finished:
                job.state, job.end_time = JobState.CANCELLED, _now()
        elif verb == "requeuehold":
            if job.state is JobState.PENDING:
                return 1, "", f"Requested operation is presently disabled for job {job.job_id}"
            self._close_attempt(job, job.state if job.state.finished else JobState.REQUEUED)
            job.state, job.nodes, job.restarts = JobState.PENDING, [], job.restarts + 1
            job.held, job.reason, job.begin_time = True, HELD_REASON, _now() + self.requeue_delay
            job.start_time = job.end_time = None
        elif verb == "hold":
            if job.state is not JobState.PENDING:
                return 1, "", "Job is no longer pending execution"
            job.held, job.reason = True, ADMIN_HOLD_REASON
        elif verb == "release":
            job.held, job.reason = False, "None"
        return 0, "", ""

    def _close_attempt(self, job: SimJob, state: JobState) -> None:
        """Record the attempt's end in accounting (``sacct -D`` keeps every attempt)."""
        end = job.end_time or _now()
        job.history.append(
            SimAttempt(state=state, exit_code=job.exit_code, nodes=job.nodes, start=job.start_time, end=end)
        )

    def _update(self, fields: dict[str, str]) -> tuple[int, str, str]:
        if "JobId" in fields:
            job = self.jobs.get(int(fields["JobId"]))
            if job is None:
                return 1, "", "Invalid job id specified"
            if job.state is not JobState.PENDING:
                return 1, "", "Job is no longer pending execution"
            job.excluded = hostlists.expand(fields["ExcNodeList"]) if fields.get("ExcNodeList") else []
            return 0, "", ""
        names = hostlists.expand(fields["NodeName"])
        if any(n not in self.nodes for n in names):
            return 1, "", "Invalid node name specified"
        for name in names:
            node = self.nodes[name]
            if fields.get("State") == "DRAIN":
                node.drain, node.reason = True, fields.get("Reason", "")
            elif fields.get("State") == "RESUME":
                node.drain, node.down, node.reason = False, False, ""
        return 0, "", ""

    # ---- output formats ------------------------------------------------------------------------------

    def _squeue_json(self) -> str:
        return json.dumps(
            {
                "meta": {"plugin": {"type": "openapi/v0.0.38"}},
                "errors": [],
                "jobs": [self._job_json(j) for j in self.jobs.values()],
            }
        )

    def _job_json(self, job: SimJob) -> dict[str, object]:
        return {
            "job_id": job.job_id,
            "name": job.name,
            "user_name": job.user,
            "user_id": job.user_id,
            "partition": self.partition,
            "job_state": job.state.value,
            "state_reason": job.reason,
            "restart_cnt": job.restarts,
            "nodes": _compress(job.nodes) if job.nodes else "",
            "excluded_nodes": _compress(job.excluded) if job.excluded else "",
            "batch_host": job.nodes[0] if job.nodes else "",
            "exit_code": job.exit_code << 8,
            "comment": job.comment,
            "current_working_directory": os.path.dirname(job.stdout),
            "start_time": _epoch(job.start_time),
            "end_time": _epoch(job.end_time),
            "submit_time": _epoch(job.submit_time),
            "priority": 0 if job.held else 1,
            "tasks_per_node": 1,
            "node_count": job.num_nodes,
        }

    def _show_job(self, job: SimJob) -> str:
        nodes = _compress(job.nodes) if job.nodes else "(null)"
        excluded = _compress(job.excluded) if job.excluded else "(null)"
        return (
            f"JobId={job.job_id} JobName={job.name}\n"
            f"   UserId={job.user}({job.user_id}) GroupId={job.user}({job.user_id})\n"
            f"   Priority={0 if job.held else 1} Partition={self.partition}\n"
            f"   JobState={job.state.value} Reason={job.reason} ExitCode={job.exit_code}:0\n"
            f"   Restarts={job.restarts} BatchHost={job.nodes[0] if job.nodes else '(null)'}\n"
            f"   SubmitTime={_local(job.submit_time)} StartTime={_local(job.start_time)} EndTime={_local(job.end_time)}\n"
            f"   NodeList={nodes} ExcNodeList={excluded}\n"
            f"   Comment={job.comment}\n"
            f"   WorkDir={os.path.dirname(job.stdout)}\n"
            f"   StdErr={job.stdout}\n"
            f"   StdOut={job.stdout}\n\n"
        )

    def _show_node(self, node: SimNode, busy: bool) -> str:
        state = "DOWN" if node.down else ("ALLOCATED" if busy else "IDLE")
        state += "+DRAIN" if node.drain else ""
        return f"NodeName={node.name} Arch=x86_64\n   State={state} Partitions={self.partition}\n   Reason={node.reason or '(null)'}\n\n"

    def _sacct(self, job_id: int) -> str:
        job = self.jobs.get(job_id)
        if job is None:
            return ""
        rows = [(a.state, a.exit_code, a.nodes, a.start, a.end) for a in job.history]
        rows.append((job.state, job.exit_code, job.nodes, job.start_time, job.end_time))
        return "".join(
            f"{job_id}|{state.value}|{code}:0|{_compress(nodes) if nodes else 'None assigned'}|"
            f"{_local(start)}|{_local(end)}\n"
            for state, code, nodes, start, end in rows
        )


class SimulatedTransport(Transport):
    """The :class:`Transport` over a :class:`SimulatedCluster`: commands answered in-process, never run."""

    def __init__(self, cluster: SimulatedCluster) -> None:
        self.cluster = cluster

    @property
    def description(self) -> str:
        return "simulated"

    async def run(self, argv: list[str], timeout: float) -> CommandResult:
        return self.cluster.answer(argv)


def current_user() -> tuple[str, int]:
    """This process's user name and id: simulated jobs' logs are written by it, so they must be its jobs."""
    uid = os.getuid()
    return pwd.getpwuid(uid).pw_name, uid


def _now() -> datetime:
    return datetime.now(UTC)


def _epoch(value: datetime | None) -> int:
    return int(value.timestamp()) if value else 0


def _local(value: datetime | None) -> str:
    """scontrol's naive local time, or ``Unknown``."""
    return value.astimezone().replace(tzinfo=None).isoformat(timespec="seconds") if value else "Unknown"


def _compress(names: list[str]) -> str:
    """Slurm's compact hostlist form (``sim[0001-0002]``)."""
    return str(hostlist.collect_hostlist(names))
