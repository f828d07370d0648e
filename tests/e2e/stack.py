"""A real Lazarus stack for end-to-end tests: a Temporal dev server (SQLite file) and a worker
process (all roles) in subprocesses, against the real Slurm test cluster; tests may add telemetry
replicas (``--role telemetry``) that stand by for the telemetry lease.

Both run as separate processes so tests can kill -9 them at any moment and
start them again on the same database, as in production.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from temporalio.client import Client

from lazarus.config import load_settings
from lazarus.models import names
from lazarus.models.lease import LeaseView
from lazarus.models.names import workflow_id
from lazarus.models.recovery import JobStatus
from lazarus.models.search_attributes import SEARCH_ATTRIBUTES
from lazarus.temporal_client import connect
from tests.conftest import SlurmCluster, submit_job, xdist_worker_index
from workflows.job_recovery import JobRecoveryWorkflow

REPO = Path(__file__).resolve().parents[2]

# Policies the tests pick in their job comments: budgets in seconds, so scenarios run in seconds.
# Names are unique per test session: opted-in jobs that an earlier session left in Slurm's memory
# (MinJobAge) name a policy this session does not know, so they are ignored instead of recovered.
SESSION = f"s{os.getpid()}"
POLICY = f"e2e-{SESSION}"
EXPIRY_POLICY = f"e2e-expiry-{SESSION}"
GRACE_POLICY = f"e2e-grace-{SESSION}"  # a minimum hang budget above the start-up grace a job may ask for
HIDDEN_POLICY = f"e2e-hidden-{SESSION}"  # configured, but not selectable by jobs
KEEP_RUNNING_POLICY = f"e2e-keep-{SESSION}"  # a stopped job keeps its allocation (on_stop: keep_running)
SPARES_POLICY = f"e2e-spares-{SESSION}"  # jobs in a reservation with a hot spare
SPARES_RESERVATION = f"lz-e2e-spares-{SESSION}"  # created by the spare pool test only
EXPEDITE_POLICY = f"e2e-expedite-{SESSION}"  # restarts for infrastructure and hardware failures jump the queue
JOB_PREFIX = f"lz-e2e-{SESSION}-"  # this session's worker watches only these jobs
TEST_POLICIES = {
    "default": {"hang_budget": 8},
    POLICY: {
        "hang_budget": 8,
        "hang_budget_min": 4,
        "startup_grace": 20,
        "decision_timeout": 300,
        "attempt_start_timeout": 60,
        "selectable": True,
    },
    EXPIRY_POLICY: {
        "hang_budget": 8,
        "hang_budget_min": 4,
        "startup_grace": 20,
        "decision_timeout": 6,
        "attempt_start_timeout": 60,
        "selectable": True,
    },
    GRACE_POLICY: {
        "hang_budget": 40,
        "hang_budget_min": 30,
        "startup_grace": 60,
        "decision_timeout": 300,
        "attempt_start_timeout": 60,
        "selectable": True,
    },
    EXPEDITE_POLICY: {
        "hang_budget": 8,
        "hang_budget_min": 4,
        "startup_grace": 20,
        "attempt_start_timeout": 120,
        "expedite": {"enabled": True, "max_expedited": 2},
        "selectable": True,
    },
    HIDDEN_POLICY: {"hang_budget": 8, "hang_budget_min": 4, "startup_grace": 20},
    KEEP_RUNNING_POLICY: {
        "hang_budget": 8,
        "hang_budget_min": 4,
        "startup_grace": 20,
        "max_attempts": 1,
        "on_stop": "keep_running",
        "selectable": True,
    },
    SPARES_POLICY: {
        "hang_budget": 8,
        "hang_budget_min": 4,
        "startup_grace": 20,
        "decision_timeout": 300,
        "attempt_start_timeout": 60,
        "selectable": True,
        "spares": {"reservation": SPARES_RESERVATION, "count": 1, "retry_interval": 2},
    },
}


FREE_PORTS_PER_WORKER = 3000  # 20000-31999 in 4 slices: xdist workers gw0-gw3 never pick the same port


def free_port() -> int:
    """A free port below Linux's ephemeral range (32768-60999), where the kernel's own outgoing
    connections cannot grab it between this check and the server's bind. Each pytest-xdist worker
    picks from its own slice of 20000-31999: another worker cannot take a port chosen here before
    its server binds it (agents' ports are chosen at the session's start and bound much later)."""
    low = 20000 + FREE_PORTS_PER_WORKER * (xdist_worker_index() % 4)
    for _ in range(200):
        port = random.randint(low, low + FREE_PORTS_PER_WORKER - 1)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {low}-{low + FREE_PORTS_PER_WORKER - 1}")


def wait_port(port: int, timeout: float = 30, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server exited ({proc.returncode}) before port {port} opened")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"port {port} did not open within {timeout} s")


@dataclass
class E2EStack:
    cluster: SlurmCluster
    root: Path
    mode: str = "act"
    port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)  # Temporal's HTTP API
    operators: list[str] = field(default_factory=list)  # authorization.operators (empty: the namespace decides)
    metrics_port: int = field(default_factory=free_port)
    temporal_metrics_port: int = field(default_factory=free_port)
    agent_ports: list[int] = field(default_factory=lambda: [free_port() for _ in range(4)])  # node i's agent
    server: subprocess.Popen | None = None
    worker: subprocess.Popen | None = None
    replicas: list[subprocess.Popen] = field(default_factory=list)  # extra telemetry replicas
    webhooks: str | None = None  # base URL of a loopback receiver (tests/e2e/receiver.py) the worker notifies

    @property
    def config_path(self) -> Path:
        return self.root / "lazarus.yaml"

    def agent_port(self, node: str) -> int:
        """Where the worker reads ``node``'s node agent (a test starts the agents when it needs them)."""
        return self.agent_ports[self.cluster.nodes.index(node)]

    @property
    def settings(self):
        return load_settings(self.config_path)

    def write_config(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        cfg = {
            "cluster": "lztest",
            "mode": self.mode,
            "temporal": {"address": f"127.0.0.1:{self.port}", "ui_url": f"http://127.0.0.1:{self.ui_port}"},
            "scheduler": {"slurm_conf": str(self.cluster.slurm_conf)},
            "discovery": {"interval": 0.5, "job_name_prefix": JOB_PREFIX},
            "policies": TEST_POLICIES,
            "dev": {"state_dir": str(self.root)},
            "metrics": {
                "port": self.metrics_port,
                "temporal_port": self.temporal_metrics_port,
                "address": "127.0.0.1",
                "cluster_view_interval": 2,
            },
            "node_agents": {
                "urls": {node: f"http://127.0.0.1:{self.agent_port(node)}/metrics" for node in self.cluster.nodes}
            },
            "logging": {"level": "INFO"},
        }
        if self.webhooks:
            cfg["notifications"] = {
                "webhooks": [
                    {"url": f"{self.webhooks}/json", "format": "json"},
                    {"url": f"{self.webhooks}/slack", "format": "slack", "events": ["advice-pending", "node-drained"]},
                    {"url": f"{self.webhooks}/flaky", "format": "json"},
                ]
            }
        if self.operators:
            cfg["authorization"] = {"operators": self.operators}
        self.config_path.write_text(yaml.safe_dump(cfg))

    def start_server(self, first: bool = False) -> None:
        """Start (or restart, on the same ports and database) the Temporal dev server. On the first
        start a port taken meanwhile by another process is retried on fresh ports."""
        for attempt in range(3 if first else 1):
            try:
                return self._start_server()
            except AssertionError:
                if not first or attempt == 2:
                    raise
                self.port, self.ui_port, self.http_port = free_port(), free_port(), free_port()
                self.write_config()

    def _start_server(self) -> None:
        argv = [
            str(Path(sys.executable).parent / "temporal"),
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--ui-port",
            str(self.ui_port),
            "--db-filename",
            str(self.root / "t.db"),
            "--sqlite-pragma",
            "journal_mode=WAL",
            "--sqlite-pragma",
            "synchronous=NORMAL",
            "--ui-disable-news-fetch",
            "--log-level",
            "error",
            "--http-port",
            str(self.http_port),
            "--metrics-port",
            str(free_port()),
        ]
        for name, kind in SEARCH_ATTRIBUTES.items():
            argv += ["--search-attribute", f"{name}={kind}"]
        log = open(self.root / "temporal.log", "ab")  # noqa: SIM115 - the server writes it for its lifetime
        self.server = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_port(self.port, proc=self.server)
        except AssertionError:
            self._kill(self.server, signal.SIGKILL)
            raise

    def _env(self) -> dict[str, str]:
        return dict(os.environ, LAZARUS_CONFIG=str(self.config_path), SLURM_CONF=str(self.cluster.slurm_conf))

    def start_worker(self, slow_release: bool = False, role: str = "all") -> None:
        """Start the worker (of ``role``); ``slow_release`` puts a `scontrol` shim first on its PATH that waits
        10 s before `scontrol release`, which holds the restart between requeuehold and release long enough to
        kill it."""
        env = self._env()
        if slow_release:
            shim = self.root / "shim"
            shim.mkdir(exist_ok=True)
            real = shutil.which("scontrol")
            (shim / "scontrol").write_text(f'#!/bin/sh\n[ "$1" = release ] && sleep 10\nexec {real} "$@"\n')
            (shim / "scontrol").chmod(0o755)
            env["PATH"] = f"{shim}:{env['PATH']}"
        log = open(self.root / "worker.log", "ab")  # noqa: SIM115 - the worker writes it for its lifetime
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "workers.host", "--role", role],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def start_telemetry_replica(self) -> subprocess.Popen:
        """Another telemetry replica (``--role telemetry``), logging to telemetry-<n>.log. It serves its
        metrics on ports of its own (as a replica on another host would): the worker holds the configured ones."""
        log = open(self.root / f"telemetry-{len(self.replicas) + 1}.log", "ab")  # noqa: SIM115 - the replica's log
        env = dict(self._env(), LAZARUS_METRICS__PORT=str(free_port()), LAZARUS_METRICS__TEMPORAL_PORT=str(free_port()))
        proc = subprocess.Popen(
            [sys.executable, "-m", "workers.host", "--role", "telemetry"],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.replicas.append(proc)
        return proc

    def stop_telemetry_replicas(self) -> None:
        """SIGTERM: a replica holding the lease releases it, so the worker takes over at once."""
        for proc in self.replicas:
            self._kill(proc, signal.SIGTERM)
        self.replicas.clear()

    async def lease(self) -> LeaseView:
        """The telemetry lease: who holds it, in which term, its handovers."""
        client = await self.client()
        handle = client.get_workflow_handle(names.telemetry_lease_id("lztest"))
        return await handle.query(names.LEASE_VIEW, result_type=LeaseView)

    async def forget_telemetry_offsets(self) -> None:
        """Lose every saved log offset (and the lease's term): terminate the lease workflow; the next
        telemetry replica starts a fresh one."""
        client = await self.client()
        await client.get_workflow_handle(names.telemetry_lease_id("lztest")).terminate(reason="e2e: lose offsets")

    @staticmethod
    def _kill(proc: subprocess.Popen | None, sig: int) -> None:
        if proc and proc.poll() is None:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=30)

    def kill_worker(self) -> None:
        self._kill(self.worker, signal.SIGKILL)

    def kill_server(self) -> None:
        self._kill(self.server, signal.SIGKILL)

    def stop(self) -> None:
        self.stop_telemetry_replicas()
        self._kill(self.worker, signal.SIGTERM)
        self._kill(self.server, signal.SIGTERM)

    async def client(self) -> Client:
        return await connect(self.settings)

    async def status(self, job_id: int) -> JobStatus:
        client = await self.client()
        return await client.get_workflow_handle(workflow_id("lztest", job_id)).query(JobRecoveryWorkflow.status)

    def log_tail(self, name: str = "worker.log", lines: int = 40) -> str:
        path = self.root / name
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def training_script(cluster: SlurmCluster, ckpt_dir: Path, **train: object) -> str:
    """An sbatch script running lazarus.demo.train on 2 nodes, one rank per node, labelled output."""
    args = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in train.items())
    return (
        f"#!/bin/bash\ncd {REPO}\n"
        f"srun --label --kill-on-bad-exit=1 {sys.executable} -m lazarus.demo.train --ckpt-dir {ckpt_dir} {args}\n"
    )


def submit_training(
    cluster: SlurmCluster, tmp: Path, comment: dict | str | None = None, sbatch: dict | None = None, **train: object
) -> int:
    """Submit the demo trainer; ``train`` are its arguments, ``sbatch`` extra sbatch options."""
    ckpt = tmp / "ckpt"
    comment = comment if comment is not None else {"lazarus": {"policy": POLICY}}
    opts = {
        "job_name": f"{JOB_PREFIX}train",
        "nodes": 2,
        "ntasks_per_node": 1,
        "gres": "gpu:1",
        "time": "5",
        "output": str(tmp / "train-%j.out"),
        "comment": json.dumps(comment) if isinstance(comment, dict) else comment,
        **(sbatch or {}),
    }
    return submit_job(cluster, training_script(cluster, ckpt, **train), **opts)
