"""Spec: two clusters' workers sharing one Temporal namespace never act on each other's jobs.

A second cluster, ``lzbeta``, runs its own worker process (all roles, default task queues) against the
session's Temporal server, next to the session's ``lztest`` worker. It watches the same test Slurm cluster
under its own name, with a job-name prefix no test job carries: that stands for its own scheduler, which
shows only its own jobs. While a ``lztest`` job crashes and is recovered, every workflow and activity task of
that job and of the ``lztest`` ledger is run by the ``lztest`` worker, never by the ``lzbeta`` one (which is
alive: it runs its own ledger meanwhile). ``lzbeta``'s CLI cannot see, show, approve or switch ``lztest``'s
jobs, and its kill switch leaves them in act mode.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from temporalio.api.history.v1 import HistoryEvent

from lazarus.models.names import ledger_id, workflow_id
from lazarus.models.policy import Mode
from lazarus.models.recovery import RecoveryState
from tests.conftest import assert_eventually
from tests.e2e.helpers import lazarus_cli, restarts, restore_nodes, wait_state
from tests.e2e.stack import REPO, SESSION, E2EStack, free_port, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")


class Beta:
    """The second cluster: its configuration and its worker process."""

    def __init__(self, e2e: E2EStack) -> None:
        config = yaml.safe_load(e2e.config_path.read_text())
        config["cluster"] = "lzbeta"
        config["discovery"]["job_name_prefix"] = f"lz-beta-{SESSION}-"  # its own jobs only: none here
        config.pop("notifications", None)
        # its own metrics ports, as a worker on another host would have (the session's worker holds these)
        config["metrics"] = {**config["metrics"], "port": free_port(), "temporal_port": free_port()}
        self.config_path = e2e.root / "lzbeta.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        env = dict(os.environ, LAZARUS_CONFIG=str(self.config_path), SLURM_CONF=str(e2e.cluster.slurm_conf))
        log = open(e2e.root / "lzbeta-worker.log", "ab")  # noqa: SIM115 - the worker writes it for its lifetime
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "workers.host", "--role", "all"],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def cli(self, e2e: E2EStack, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, LAZARUS_CONFIG=str(self.config_path), SLURM_CONF=str(e2e.cluster.slurm_conf))
        return subprocess.run(
            [sys.executable, "-m", "lazarus.cli.main", *args], cwd=REPO, env=env, capture_output=True, text=True
        )

    def stop(self) -> None:
        if self.worker.poll() is None:
            os.killpg(self.worker.pid, signal.SIGTERM)
            self.worker.wait(timeout=30)


@pytest.fixture
def beta(e2e: E2EStack) -> Iterator[Beta]:
    second = Beta(e2e)
    yield second
    second.stop()


def _identities(events: list[HistoryEvent]) -> set[str]:
    """Who ran the workflow's tasks and its activities (Temporal records each worker's identity)."""
    found = set()
    for event in events:
        for attrs in ("workflow_task_started_event_attributes", "activity_task_started_event_attributes"):
            if event.HasField(attrs):
                found.add(getattr(event, attrs).identity)
    return found


async def _history(e2e: E2EStack, wid: str) -> list[HistoryEvent]:
    return [e async for e in (await e2e.client()).get_workflow_handle(wid).fetch_history_events()]


async def test_a_second_cluster_s_workers_never_touch_the_first_cluster_s_recovery(
    e2e: E2EStack, beta: Beta, job_dir: Path
):
    restore_nodes(e2e.cluster)
    alpha_worker = f"{e2e.worker.pid}@"
    beta_worker = f"{beta.worker.pid}@"
    # beta is up: its own ledger runs, its activities run by its own worker
    await assert_eventually(lambda: _ran_by(e2e, ledger_id("lzbeta"), beta_worker), timeout=60)

    (job_dir / "crash").mkdir()
    (job_dir / "long").mkdir()
    crashed = submit_training(e2e.cluster, job_dir / "crash", **CRASH)
    running = submit_training(e2e.cluster, job_dir / "long", sbatch={"nodes": 1}, steps=2000, step_time=0.1)
    try:
        final = await wait_state(e2e, crashed, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=120)
        assert final.state == RecoveryState.COMPLETED and restarts(e2e.cluster, crashed) == 1
        served = _identities(await _history(e2e, workflow_id("lztest", crashed)))
        assert served and all(w.startswith(alpha_worker) for w in served), f"the job was served by {served}"
        served = _identities(await _history(e2e, ledger_id("lztest")))  # earlier tests restarted alpha's worker
        assert served and not any(w.startswith(beta_worker) for w in served), f"the ledger was served by {served}"

        # beta's CLI cannot see, show, approve or switch alpha's jobs
        assert str(crashed) not in beta.cli(e2e, "jobs", "--json").stdout
        shown = beta.cli(e2e, "show", str(crashed))
        assert shown.returncode != 0 and "not watched by Lazarus on cluster lzbeta" in shown.stderr
        approve = beta.cli(e2e, "advice", "approve", str(crashed), "--generation", "1")
        assert approve.returncode != 0 and "lzbeta" in approve.stderr
        await wait_state(e2e, running, RecoveryState.WATCHING)
        switched = beta.cli(e2e, "mode", "monitor")
        assert switched.returncode == 0 and "set on 0 running job workflow(s)" in switched.stdout
        assert (await e2e.status(running)).mode == Mode.ACT
        assert "0 running" not in lazarus_cli(e2e, "mode", "act").stdout  # alpha's own switch does reach it
    finally:
        e2e.cluster.run("scancel", str(running), check=False)
        restore_nodes(e2e.cluster)


async def _ran_by(e2e: E2EStack, wid: str, worker: str) -> bool:
    return any(w.startswith(worker) for w in _identities(await _history(e2e, wid)))
