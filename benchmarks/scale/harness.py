"""The scale and correlated-failure benchmarks' stack: a Temporal server of their own, Lazarus, simulated jobs.

- **Temporal**: the embedded dev server (``temporal server start-dev``, SQLite in WAL mode, as ``lazarus dev up``
  runs it) on ports and a state directory of its own (:class:`Ports`, ``/var/tmp/lazarus-scale/<name>``), on a fresh
  database every run: never the tests' ``lztest`` stack or a user's dev stack.
- **Lazarus**: the roles of :func:`workers.host.run_workers`, in act mode. The scheduler and telemetry roles run in
  this process (they share the simulated controller); with ``control_process`` (the scale benchmark) the control
  role runs in its own process, ``lazarus worker --role control``, as production runs roles, so that workflow
  tasks and the ledger's kill-switch queries do not compete with the telemetry loop for one interpreter; without
  it, every role runs here. The real telemetry loop (lease, ``squeue --json`` parse, log tails, detection, digests), the real job
  workflows and node ledger, the real Slurm adapter (reads, restart with exclusions, drains) over
  :class:`lazarus.slurm.simulated.SimulatedTransport`.
- **Jobs**: :class:`lazarus.slurm.simulated.SimulatedCluster` schedules them; their logs are written by
  :mod:`benchmarks.scale.writer` in a child process, which the cluster tells when an attempt starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from loguru import logger
from temporalio.client import Client

from lazarus.config import Settings, load_settings
from lazarus.devstack.component import port_open
from lazarus.devstack.temporal import temporal_binary
from lazarus.logging import setup_logging
from lazarus.models import names
from lazarus.models.recovery import JobStatus
from lazarus.models.search_attributes import SEARCH_ATTRIBUTES
from lazarus.models.slurm import JobState
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.simulated import SimJob, SimulatedCluster, SimulatedTransport, current_user
from lazarus.temporal_client import connect
from workers.host import ROLES, run_workers

REPO = Path(__file__).resolve().parents[2]
STATE_ROOT = Path("/var/tmp/lazarus-scale")
CLUSTER = "lzscale"
USERS = 8  # jobs belong to this many users (names only: their logs are all this process's user's files)
OPT_IN = json.dumps({"lazarus": {"policy": "default"}})


@dataclass(frozen=True)
class Ports:
    """The benchmark's own ports, above Linux's ephemeral range and apart from the chaos soak's (61001-62233)."""

    grpc: int = 62501
    ui: int = 62502
    http: int = 62503


@dataclass
class Stack:
    """One run's server, worker, simulated cluster and writer. Use as ``async with Stack(...) as stack``."""

    name: str
    nodes: int
    ports: Ports = field(default_factory=Ports)
    requeue_delay_s: float = 0.0
    progress_every_s: float = 10.0
    checkpoint_every_s: float = 1800.0
    policy: dict[str, object] = field(default_factory=dict)
    ledger: dict[str, object] = field(default_factory=dict)
    control_process: bool = False

    def __post_init__(self) -> None:
        self.root = STATE_ROOT / self.name
        self.job_dir = self.root / "jobs"
        self.cluster = SimulatedCluster(
            [f"sim{i:05d}" for i in range(1, self.nodes + 1)], requeue_delay_s=self.requeue_delay_s
        )
        self.cluster.on_start = self._started
        self.server: subprocess.Popen[bytes] | None = None
        self.writer: subprocess.Popen[bytes] | None = None
        self.control: subprocess.Popen[bytes] | None = None
        self.crashes: dict[int, float] = {}  # job id -> when its failing line was written (epoch)
        self.starts: dict[int, list[float]] = {}  # job id -> when each attempt started (epoch)
        self._stop = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self.client: Client | None = None

    # ---- up and down -----------------------------------------------------------------------------

    async def __aenter__(self) -> Stack:
        if self.root.exists():
            shutil.rmtree(self.root)
        self.job_dir.mkdir(parents=True)
        self._start_server()
        settings = self.settings()
        setup_logging("WARNING")
        self.client = await connect(settings)
        slurm = SlurmClient(SimulatedTransport(self.cluster), command_timeout=30.0, verify_timeout=30.0)
        roles = [role for role in ROLES if not (self.control_process and role == "control")]
        if self.control_process:
            self._start_control()
        self._worker = asyncio.create_task(run_workers(settings, roles, self._stop, slurm=slurm))
        self._start_writer()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        if self._worker is not None:
            try:
                await asyncio.wait_for(self._worker, 60)
            except Exception as failure:  # the worker's own error is the run's, not the teardown's
                logger.warning(f"worker stopped with {failure!r}")
        for proc in (self.control, self.writer, self.server):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if self._reader is not None:
            self._reader.cancel()

    def _start_server(self) -> None:
        if port_open(self.ports.grpc):
            raise RuntimeError(f"port {self.ports.grpc} is in use: another scale benchmark running? (--port-base)")
        argv = [str(temporal_binary()), "server", "start-dev", "--ip", "127.0.0.1"]
        argv += ["--port", str(self.ports.grpc), "--ui-port", str(self.ports.ui), "--http-port", str(self.ports.http)]
        argv += ["--db-filename", str(self.root / "temporal.db"), "--sqlite-pragma", "journal_mode=WAL"]
        argv += ["--sqlite-pragma", "synchronous=NORMAL", "--ui-disable-news-fetch", "--log-level", "warn"]
        for attr, kind in SEARCH_ATTRIBUTES.items():
            argv += ["--search-attribute", f"{attr}={kind}"]
        log = (self.root / "temporal.log").open("ab")
        self.server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while not port_open(self.ports.grpc):
            if self.server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Temporal server did not start; see {self.root / 'temporal.log'}")
            time.sleep(0.2)

    def _start_control(self) -> None:
        """The control role in a process of its own (as ``lazarus worker --role control`` runs in production)."""
        lazarus = Path(sys.executable).with_name("lazarus")
        argv = [str(lazarus), "--config", str(self.root / "lazarus.yaml"), "worker", "--role", "control"]
        log = (self.root / "control.log").open("ab")
        self.control = subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def _start_writer(self) -> None:
        argv = [sys.executable, "-m", "benchmarks.scale.writer", "--progress-every", str(self.progress_every_s)]
        argv += ["--checkpoint-every", str(self.checkpoint_every_s)]
        self.writer = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._reader = asyncio.create_task(self._read_writer())

    async def _read_writer(self) -> None:
        """The writer's answers: when each injected failing line was written."""
        assert self.writer is not None and self.writer.stdout is not None
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, self.writer.stdout.readline)
            if not line:
                return
            _, job_id, ts = line.decode().split()
            self.crashes[int(job_id)] = float(ts)

    def settings(self) -> Settings:
        cfg = {
            "cluster": CLUSTER,
            "mode": "act",
            "temporal": {"address": f"127.0.0.1:{self.ports.grpc}"},
            "scheduler": {"transport": "local"},  # not used: the worker is handed the simulated client
            "discovery": {"interval": 1.0, "log_roots": [str(self.job_dir)]},
            "policies": {"default": {"decision_timeout": 120, **self.policy}},
            "ledger": {"reconcile_interval": 60, **self.ledger},
            "logging": {"level": "WARNING"},
        }
        path = self.root / "lazarus.yaml"
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        path.chmod(0o644)
        return load_settings(path)

    # ---- the simulation ------------------------------------------------------------------------------

    def _send(self, line: str) -> None:
        assert self.writer is not None and self.writer.stdin is not None
        self.writer.stdin.write(f"{line}\n".encode())
        self.writer.stdin.flush()

    def _started(self, job: SimJob) -> None:
        self.starts.setdefault(job.job_id, []).append(time.time())
        self._send(f"start {job.job_id} {job.restarts} {job.stdout} {job.nodes[0]}")

    def submit(self, count: int, nodes_per_job: int, placement: list[list[str]] | None = None) -> list[SimJob]:
        """``count`` opted-in jobs, started at once on the nodes ``placement`` names (default: disjoint nodes)."""
        user, uid = current_user()
        jobs = []
        names_ = sorted(self.cluster.nodes)
        for i in range(count):
            job = self.cluster.submit(
                f"train-{i}", "", nodes_per_job, user=f"user{i % USERS}", user_id=uid, comment=OPT_IN
            )
            job.stdout = str(self.job_dir / f"job-{job.job_id}.out")
            nodes = placement[i] if placement else names_[i * nodes_per_job : (i + 1) * nodes_per_job]
            self.cluster.start(job, nodes)
            jobs.append(job)
        del user
        return jobs

    def crash(self, job: SimJob, node: str) -> None:
        """The job's rank on ``node`` prints an Xid 79 and dies; the job ends FAILED a second later."""
        self._send(f"crash {job.job_id} {node}")
        asyncio.get_running_loop().call_later(1.0, self._fail, job.job_id, job.restarts)

    def _fail(self, job_id: int, attempt: int) -> None:
        job = self.cluster.jobs[job_id]
        if job.restarts == attempt and job.state is JobState.RUNNING:
            self.cluster.end(job, JobState.FAILED, exit_code=1)

    # ---- reads -----------------------------------------------------------------------------------------

    async def status(self, job_id: int) -> JobStatus:
        assert self.client is not None
        handle = self.client.get_workflow_handle(names.workflow_id(CLUSTER, job_id))
        return await handle.query(names.JOB_STATUS, result_type=JobStatus)

    async def watched(self) -> int:
        """How many job workflows exist (Temporal's visibility)."""
        assert self.client is not None
        count = await self.client.count_workflows(f"WorkflowType = '{names.JOB_WORKFLOW}'")
        return count.count

    async def wait_watched(self, jobs: int, timeout: float) -> float:
        """Seconds until every one of ``jobs`` jobs has its workflow."""
        started = time.monotonic()
        while (seen := await self.watched()) < jobs:
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"only {seen} of {jobs} workflows after {timeout:g} s")
            await asyncio.sleep(2)
        return time.monotonic() - started

    @property
    def server_pid(self) -> int:
        assert self.server is not None
        return self.server.pid

    @property
    def control_pid(self) -> int | None:
        """The control role's own process (None: it runs in this one)."""
        return self.control.pid if self.control is not None else None

    @property
    def writer_pid(self) -> int:
        assert self.writer is not None
        return self.writer.pid


def worker_pid() -> int:
    return os.getpid()
