"""The soak's own embedded stack: cluster ``lzchaos`` under /var/tmp/lazarus-chaos, on ports of its own.

Slurm (munge, MariaDB, slurmdbd, slurmctld, 4 slurmd) and the Temporal dev server come from the ``lazarus dev up``
machinery (:class:`lazarus.devstack.stack.DevStack`), with settings that never collide with the tests' cluster
``lztest`` or a user's dev stack (ports above Linux's ephemeral range, 61000-62300). The Lazarus workers are three
processes, one per role (control, scheduler, telemetry) as in production, started by the soak with its own
configuration (act mode, short budgets, a job-name prefix per run) so that each can be killed on its own.

One node agent per fake node (``lazarus node-agent`` on the dev stack's fake NVML, built with gcc) runs as in
``lazarus dev up``; the workers read their verdicts before a drain (``node_agents.urls``). A crashing job's
hardware fault (Xid 79, uncorrectable ECC) reaches its node's fake GPU first (:meth:`ChaosStack.gpu_dir`), so the
node agent corroborates the job's word; a node the soak returns to service gets healthy fake GPUs again
(:meth:`ChaosStack.repair_gpus`).

Each run starts on a fresh Temporal database (so the ledger and every workflow belong to this run); a Temporal
restart within the run keeps the same database. Every process the soak kills or freezes is one this stack started:
the daemons by their marked pid files, the workers by their own handles.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lazarus.config import DevSettings, Settings, TaskQueues, load_settings
from lazarus.devstack import procs
from lazarus.devstack.component import Component, port_open
from lazarus.devstack.fake_nvml import build_fake_nvml
from lazarus.devstack.node_agents import agent_urls, fake_gpus, library_dir, node_agent_components
from lazarus.devstack.stack import DevStack, Parts, UpReport
from lazarus.devstack.worker_procs import poller_pids
from lazarus.errors import DevStackError

REPO = Path(__file__).resolve().parents[2]
ROLES = ("control", "scheduler", "telemetry")
CHAOS_DEV = DevSettings(
    state_dir=Path("/var/tmp/lazarus-chaos"),
    cluster_name="lzchaos",
    temporal_port=61233,
    temporal_ui_port=62233,
    temporal_http_port=61243,  # never the dev stack's 17243
    slurmctld_port=61817,
    slurmd_port0=61001,
    slurmdbd_port=61819,
    mysql_port=61306,
    nodes=4,
    gpus_per_node=4,
    accounting=True,
    workers=False,
    node_agent_port0=61401,
)
# An agent keeps a node failed this long after an Xid: past the decision deadline (a monitor-mode drain waits for
# the operator's approval), short enough that a node the soak resumed is soon judged on fresh readings again.
AGENT_XID_WINDOW_S = 90.0
# The soak's policy: budgets in seconds so that a few minutes hold many incidents. Monitor-mode jobs name it too
# and add "mode": "monitor" in their comment (a job may tighten its policy to monitor mode, never loosen it).
SOAK_POLICY = "soak"
DECISION_TIMEOUT_S = 40.0
POLICIES: dict[str, dict[str, Any]] = {
    "default": {"hang_budget": 30},
    SOAK_POLICY: {
        "hang_budget": 30,
        "hang_budget_min": 10,
        "startup_grace": 60,
        "decision_timeout": DECISION_TIMEOUT_S,
        "attempt_start_timeout": 90,
        "max_attempts": 4,
        "max_attempts_without_checkpoint": 3,
        "selectable": True,
    },
}
WORKER_READY_S = 90.0
PORT_RELEASE_S = 15.0
START_TRIES = 3


@dataclass
class ChaosStack:
    """The dedicated stack, its worker processes, and the crude levers the fault injector pulls."""

    run_id: str
    dev: DevSettings = field(default_factory=lambda: CHAOS_DEV)
    workers: dict[str, subprocess.Popen] = field(default_factory=dict)
    frozen: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.stack = DevStack(self.dev, Parts(temporal=True, workers=False, node_agents=False))
        self.layout = self.stack.layout
        self.agents = node_agent_components(self.dev, self.layout, self.stack.daemon_env(), AGENT_XID_WINDOW_S)

    # ---- names and settings --------------------------------------------------------------------

    @property
    def cluster(self) -> str:
        return self.dev.cluster_name

    @property
    def job_prefix(self) -> str:
        """Every job of this run is named with it; the workers watch only these."""
        return f"chaos-{self.run_id}-"

    @property
    def config_path(self) -> Path:
        return self.layout.root / "chaos.yaml"

    @property
    def job_dir(self) -> Path:
        return self.layout.root / "jobs" / self.run_id

    @property
    def slurm_conf(self) -> Path:
        return self.layout.slurm_conf

    def settings(self) -> Settings:
        return load_settings(self.config_path)

    def slurm_env(self) -> dict[str, str]:
        return self.stack.slurm_env()

    def nodes(self) -> list[str]:
        return [f"node{i}" for i in range(1, self.dev.nodes + 1)]

    @property
    def gpu_dir(self) -> Path:
        """The fake NVML scripts, one directory per node: the demo trainer's ``--fake-gpu-dir``."""
        return fake_gpus(self.layout, "node1").directory.parent

    def repair_gpus(self, node: str) -> None:
        """``node``'s fake GPUs are healthy again (its agent still remembers a recent Xid for its window)."""
        gpus = fake_gpus(self.layout, node)
        if gpus.state.exists():
            gpus.repair(self.dev.gpus_per_node)

    # ---- up and down ---------------------------------------------------------------------------

    def up(self) -> UpReport:
        """Slurm as it is (started if down), Temporal on a fresh database, the configuration written."""
        self.layout.root.mkdir(parents=True, exist_ok=True)
        temporal = self.component("temporal")
        temporal.stop(self.layout)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.layout.temporal_db}{suffix}").unlink(missing_ok=True)
        (self.layout.root / "telemetry-offsets.json").unlink(missing_ok=True)
        report = self.stack.up()
        self.start_agents()
        report.started += [agent.name for agent in self.agents]
        self.job_dir.mkdir(parents=True, exist_ok=True)
        self.job_dir.chmod(0o755)
        self.write_config()
        return report

    def start_agents(self) -> None:
        """Fresh node agents on healthy fake GPUs (an agent left by an earlier run remembers its Xids)."""
        if build_fake_nvml(library_dir(self.layout)) is None:
            raise DevStackError("the soak's node agents need gcc to build their fake NVML (apt-get install gcc)")
        for agent in self.agents:
            agent.stop(self.layout)
        for node in self.nodes():
            self.repair_gpus(node)
        for agent in self.agents:
            agent.ensure(self.layout)

    def write_config(self) -> None:
        self.config_path.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        self.config_path.chmod(0o644)

    def config(self) -> dict[str, Any]:
        """The workers' lazarus.yaml, as a mapping."""
        return {
            "cluster": self.cluster,
            "mode": "act",
            "temporal": {
                "address": f"127.0.0.1:{self.dev.temporal_port}",
                "ui_url": f"http://127.0.0.1:{self.dev.temporal_ui_port}",
            },
            "scheduler": {"transport": "local", "slurm_conf": str(self.slurm_conf)},
            "discovery": {"interval": 1.0, "job_name_prefix": self.job_prefix},
            "policies": POLICIES,
            "ledger": {"reconcile_interval": 30},
            "node_agents": {"urls": agent_urls(self.dev)},
            "dev": self.dev.model_dump(mode="json"),
            "logging": {"level": "INFO"},
        }

    def down(self) -> None:
        """Stop the workers, the node agents and the whole stack (what ``lazarus dev down`` would stop for it)."""
        self.stop_workers()
        for agent in self.agents:
            agent.stop(self.layout)
        self.stack.down()

    # ---- workers -------------------------------------------------------------------------------

    def start_worker(self, role: str) -> None:
        env = dict(os.environ, LAZARUS_CONFIG=str(self.config_path), SLURM_CONF=str(self.slurm_conf))
        env.pop("SLURM_JWT", None)
        log = open(self.layout.log_file(f"chaos-worker-{role}"), "ab")  # noqa: SIM115 - the worker writes it while it runs
        self.workers[role] = subprocess.Popen(
            [sys.executable, "-m", "workers.host", "--role", role, "--config", str(self.config_path)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()

    def start_workers(self) -> None:
        for role in ROLES:
            self.start_worker(role)

    def wait_workers_polling(self, timeout: float = WORKER_READY_S) -> None:
        """Until every role's worker polls its task queue (the telemetry loop needs the others up)."""
        queues = TaskQueues().for_cluster(self.cluster)
        deadline = time.monotonic() + timeout
        for role in ROLES:
            while True:
                proc = self.workers[role]
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"the {role} worker exited ({proc.returncode}); see "
                        f"{self.layout.log_file(f'chaos-worker-{role}')}"
                    )
                if proc.pid in poller_pids(self.dev, getattr(queues, role)):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the {role} worker does not poll after {timeout:.0f} s")
                time.sleep(0.5)

    def worker_alive(self, role: str) -> bool:
        proc = self.workers.get(role)
        return proc is not None and proc.poll() is None

    def kill_worker(self, role: str) -> None:
        """kill -9 the worker's whole process group (the worker and any Slurm command it is running)."""
        proc = self.workers.get(role)
        if proc is not None and proc.poll() is None:
            self.thaw(f"worker:{role}")
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)

    def stop_workers(self) -> None:
        for role in ROLES:
            self.thaw(f"worker:{role}")
            proc = self.workers.get(role)
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for role in ROLES:
            proc = self.workers.get(role)
            if proc is None:
                continue
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    # ---- daemons -------------------------------------------------------------------------------

    def component(self, name: str) -> Component:
        for comp in self.stack.components():
            if comp.name == name:
                return comp
        raise KeyError(name)

    def pid(self, target: str) -> int | None:
        """The live pid of ``slurmctld``, ``temporal`` or ``worker:<role>``."""
        if target.startswith("worker:"):
            proc = self.workers.get(target.split(":", 1)[1])
            return proc.pid if proc is not None and proc.poll() is None else None
        return self.component(target).pid(self.layout)

    def kill9(self, name: str) -> int | None:
        """kill -9 a daemon of the stack (by its marked pid file); return the pid killed."""
        self.thaw(name)
        comp = self.component(name)
        pid = comp.pid(self.layout)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            procs.wait_dead([pid], 30)
        self._wait_port_closed(comp)
        return pid

    def stop(self, name: str) -> int | None:
        """Stop a daemon gracefully (SIGTERM, then SIGKILL after its grace)."""
        self.thaw(name)
        comp = self.component(name)
        pid = comp.stop(self.layout)
        self._wait_port_closed(comp)
        return pid

    def _wait_port_closed(self, comp: Component) -> None:
        """Until the dead daemon's port is free. A multi-threaded process (Temporal is a Go program) shows as a
        zombie as soon as its main thread exits, while its other threads still hold the listening socket."""
        deadline = time.monotonic() + PORT_RELEASE_S
        while comp.port is not None and port_open(comp.port) and time.monotonic() < deadline:
            time.sleep(0.1)

    def ensure(self, name: str) -> None:
        """Start a daemon if it is down and wait until it answers (retried: a restart right after a kill may
        find its port still held for a moment)."""
        for attempt in range(START_TRIES):
            try:
                self.component(name).ensure(self.layout)
                return
            except DevStackError:
                if attempt == START_TRIES - 1:
                    raise
                time.sleep(2.0)

    def freeze(self, target: str) -> int | None:
        """SIGSTOP ``target`` (for a worker: its process group); remembered so that :meth:`heal` thaws it."""
        pid = self.pid(target)
        if pid is None:
            return None
        self._signal(target, pid, signal.SIGSTOP)
        self.frozen[target] = pid
        return pid

    def thaw(self, target: str) -> None:
        pid = self.frozen.pop(target, None)
        if pid is not None and procs.is_alive(pid):
            self._signal(target, pid, signal.SIGCONT)

    @staticmethod
    def _signal(target: str, pid: int, sig: signal.Signals) -> None:
        try:
            if target.startswith("worker:"):
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)
        except ProcessLookupError:
            pass

    def heal(self) -> list[str]:
        """Thaw whatever is frozen, start whatever is down; return what had to be started."""
        for target in list(self.frozen):
            self.thaw(target)
        started = []
        for name in ("slurmctld", "temporal"):
            if self.component(name).pid(self.layout) is None:
                started.append(name)
            self.ensure(name)
        for role in ROLES:
            if not self.worker_alive(role):
                self.start_worker(role)
                started.append(f"worker:{role}")
        return started
