"""``dev up`` / ``down`` / ``status``: the whole embedded stack, in dependency order.

Order: munged -> MariaDB -> slurmdbd -> slurmctld -> slurmd x N -> Temporal ->
the webhook inbox (with the workers: where their notices land) -> node agents x N (with the workers: one per fake node, on a fake NVML built with
gcc) -> workers. ``up`` starts only what is down and waits for each part to answer;
``down`` stops, in reverse order, only processes whose pid file names a live
process carrying this stack's marker, then kills job processes and
``slurmstepd`` left behind by this cluster (and only this cluster). One file
lock per state directory serialises concurrent ``up``/``down`` calls, e.g. two
pytest sessions sharing the test cluster.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from loguru import logger

from lazarus.config import DevSettings
from lazarus.devstack import procs
from lazarus.devstack.component import Component
from lazarus.devstack.fake_nvml import build_fake_nvml
from lazarus.devstack.inbox import inbox_component, inbox_url
from lazarus.devstack.layout import MARKER_ENV, Layout
from lazarus.devstack.mariadb import mariadb_component
from lazarus.devstack.munge import munge_component
from lazarus.devstack.netports import reserve_ports
from lazarus.devstack.node_agents import library_dir, node_agent_components
from lazarus.devstack.packages import ACCOUNTING_PACKAGES, SLURM_PACKAGES, ensure_packages
from lazarus.devstack.slurm import client_env, slurm_components, wait_cluster_ready
from lazarus.devstack.slurm_conf import make_fake_gpus, write_configs
from lazarus.devstack.stack_config import stack_metrics, write_lazarus_yaml
from lazarus.devstack.status import ComponentStatus, StackStatus
from lazarus.devstack.temporal import temporal_component
from lazarus.devstack.worker_procs import workers_available, workers_component
from lazarus.errors import DevStackError

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Stopped first and waited for last: slow to exit, and nothing else depends on them.
EARLY_STOP = ("workers", "temporal")


@dataclass(frozen=True)
class Parts:
    """Which optional parts ``up`` manages (Slurm itself is always included)."""

    temporal: bool = True
    workers: bool = True
    node_agents: bool = True
    inbox: bool = True


@dataclass
class UpReport:
    started: list[str] = field(default_factory=list)
    already_up: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


class DevStack:
    def __init__(self, dev: DevSettings, parts: Parts = Parts()) -> None:
        self.dev = dev
        workers = parts.workers and dev.workers and parts.temporal
        self.parts = Parts(
            temporal=parts.temporal,
            workers=workers,
            node_agents=parts.node_agents and dev.node_agents and workers,
            inbox=parts.inbox and dev.inbox_port != 0 and workers,
        )
        self.layout = Layout(dev.state_dir)

    @property
    def marker(self) -> str:
        return str(self.layout.root)

    def daemon_env(self) -> dict[str, str]:
        """A minimal, predictable environment for the daemons (not the caller's)."""
        return {
            "PATH": SYSTEM_PATH,
            "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8",
            "SLURM_CONF": str(self.layout.slurm_conf),
            MARKER_ENV: self.marker,
        }

    def slurm_env(self) -> dict[str, str]:
        """Environment for Slurm client commands (sbatch, squeue, ...) against this stack."""
        return client_env(self.layout, dict(os.environ))

    def components(self, everything: bool = False) -> list[Component]:
        """The components in start order; ``everything`` includes disabled parts (for ``down``)."""
        env = self.daemon_env()
        comps = [munge_component(self.layout, env)]
        if self.dev.accounting or everything:
            comps.append(mariadb_component(self.dev, self.layout, env))
        dev = self.dev.model_copy(update={"accounting": True}) if everything else self.dev
        comps += slurm_components(dev, self.layout, env)
        if self.parts.temporal or everything:
            comps.append(temporal_component(self.dev, self.layout, env))
        if self.parts.inbox or everything:
            comps.append(inbox_component(self.dev, self.layout, env))
        if self.parts.node_agents or everything:
            comps += node_agent_components(self.dev, self.layout, env)
        if (self.parts.workers and workers_available()) or everything:
            comps.append(workers_component(self.dev, self.layout, self.marker))
        return comps

    def up(self) -> UpReport:
        """Start whatever is down and wait until the whole stack answers."""
        t0 = time.monotonic()
        report = UpReport()
        installed = ensure_packages(list(SLURM_PACKAGES) + (list(ACCOUNTING_PACKAGES) if self.dev.accounting else []))
        if installed:
            report.notes.append(f"installed Debian packages: {' '.join(installed)}")
        self.layout.root.mkdir(parents=True, exist_ok=True)
        check_reachable(self.layout.root)
        with self._locked():
            self.layout.create_dirs()
            make_fake_gpus(self.dev, self.layout)
            if self._write_configs_changed():
                self._restart_slurm_for_new_config(report)
            self._build_fake_nvml(report)
            write_lazarus_yaml(self.dev, self.layout, node_agents=self.parts.node_agents, inbox=self.parts.inbox)
            if self.parts.workers and not workers_available():
                report.notes.append("workers: not available (module workers.host is not installed)")
            comps = self.components()
            reserve_ports(
                [c.port for c in comps if c.port]
                + [
                    self.dev.temporal_ui_port,
                    self.dev.temporal_http_port,
                    self.dev.metrics_port,
                    self.dev.temporal_metrics_port,
                ]
            )
            self._enabled_file.write_text("".join(f"{c.name}\n" for c in comps))
            for comp in comps:
                (report.started if comp.ensure(self.layout) else report.already_up).append(comp.name)
                if comp.name == f"slurmd-node{self.dev.nodes}":  # the last node: Slurm is complete
                    wait_cluster_ready(self.dev, self.slurm_env())
        report.seconds = time.monotonic() - t0
        return report

    def down(self) -> list[str]:
        """Stop everything this stack started; return the names of what was running."""
        stopped: list[str] = []
        if not self.layout.root.exists():
            return stopped
        with self._locked():
            comps = list(reversed(self.components(everything=True)))
            running = {c.name for c in comps if c.pid(self.layout) is not None}
            early = [c for c in comps if c.name in EARLY_STOP]
            for comp in early:
                comp.signal_stop(self.layout)
            for comp in [c for c in comps if c not in early] + early:
                comp.stop(self.layout)
            stopped = [c.name for c in comps if c.name in running]
            leftovers = procs.slurm_leftovers(self.layout.slurm_conf)
            if leftovers:
                logger.info("killing {} job processes left by this cluster", len(leftovers))
                procs.terminate(leftovers, grace=1.0)
                stopped.append(f"{len(leftovers)} leftover job processes")
        return stopped

    def status(self) -> StackStatus:
        """Each component that the last ``up`` managed (or would manage): up or down."""
        try:
            enabled = set(self._enabled_file.read_text().split())
        except FileNotFoundError:
            enabled = {c.name for c in self.components()}
        rows = []
        for comp in self.components(everything=True):
            pid = comp.pid(self.layout)
            if pid is not None or comp.name in enabled:
                rows.append(ComponentStatus(name=comp.name, up=pid is not None, pid=pid, port=comp.port))
        temporal = "temporal" in enabled
        metrics = stack_metrics(self.dev) if "workers" in enabled else None
        return StackStatus(
            cluster=self.dev.cluster_name,
            state_dir=self.layout.root,
            slurm_conf=self.layout.slurm_conf,
            lazarus_config=self.layout.lazarus_yaml,
            temporal_address=f"127.0.0.1:{self.dev.temporal_port}" if temporal else None,
            ui_url=f"http://127.0.0.1:{self.dev.temporal_ui_port}" if temporal else None,
            http_api_url=f"http://127.0.0.1:{self.dev.temporal_http_port}" if temporal else None,
            metrics_urls=metrics.urls() if metrics else [],
            inbox_url=inbox_url(self.dev) if "inbox" in enabled else None,
            notices_file=self.layout.notices if "inbox" in enabled else None,
            components=rows,
        )

    def _build_fake_nvml(self, report: UpReport) -> None:
        """The node agents' fake NVML; without gcc the stack runs without them, and says so."""
        if self.parts.node_agents and build_fake_nvml(library_dir(self.layout)) is None:
            self.parts = replace(self.parts, node_agents=False)
            report.notes.append(
                "node agents: not started (gcc is needed to build their fake NVML); drains then "
                "wait for corroboration from Slurm or from jobs of several users"
            )

    @property
    def _enabled_file(self) -> Path:
        return self.layout.run / "enabled"

    def _write_configs_changed(self) -> bool:
        before = _read_all(self.layout)
        write_configs(self.dev, self.layout)
        return before is not None and before != _read_all(self.layout)

    def _restart_slurm_for_new_config(self, report: UpReport) -> None:
        """slurmctld/slurmd read their config at start only, so a change means a restart."""
        env = self.daemon_env()
        running = [c for c in slurm_components(self.dev, self.layout, env) if c.pid(self.layout) is not None]
        for comp in reversed(running):
            comp.stop(self.layout)
        if running:
            report.notes.append("Slurm configuration changed: restarted the Slurm daemons")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.layout.lock_file, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)


def check_reachable(root: Path) -> None:
    """Fail clearly when munged (user munge) and MariaDB (user mysql) could not reach ``root``.

    The state directory must be the caller's own, and is made writable by its owner only: the CLI
    loads ``lazarus.yaml`` from it. munged and MariaDB drop root privileges, so every directory above it
    must be searchable by others; otherwise munged dies with a bare
    "Permission denied" in its log (pytest's tmp_path, under a 0700 directory,
    is such a place).
    """
    info = root.stat()
    if info.st_uid != os.geteuid():
        raise DevStackError(
            f"state directory {root} belongs to uid {info.st_uid}, not to you (uid {os.geteuid()}); "
            "another user could have planted its configuration: remove it or choose another"
        )
    root.chmod((info.st_mode | 0o755) & ~0o022)  # others search it (munge, mysql), only its owner writes it
    for d in [root, *root.parents]:
        if not d.stat().st_mode & 0o001:
            raise DevStackError(
                f"state directory {root} is not reachable by the munge and mysql users "
                f"because {d} has no search permission for others; use a directory under /var/tmp"
            )


def _read_all(layout: Layout) -> tuple[str, ...] | None:
    try:
        return tuple((layout.etc / n).read_text() for n in ("slurm.conf", "gres.conf", "slurmdbd.conf"))
    except FileNotFoundError:
        return None
