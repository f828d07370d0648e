"""Waiting helpers for the end-to-end tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from lazarus.models.names import ledger_id
from lazarus.models.recovery import JobStatus, RecoveryState
from tests.conftest import SlurmCluster, assert_eventually
from tests.e2e.stack import REPO, E2EStack


async def wait_state(e2e: E2EStack, job_id: int, *states: RecoveryState, timeout: float = 90) -> JobStatus:
    async def check():
        status = await e2e.status(job_id)
        return status if status.state in states else None

    try:
        return await assert_eventually(check, timeout=timeout, interval=0.3)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker log ---\n{e2e.log_tail()}") from None


async def ledger_started(e2e: E2EStack, timeout: float = 60) -> None:
    """Until the node ledger runs: the telemetry worker starts it at its first cycle, so on a fresh stack an
    operator's `lazarus nodes ...` can come before it (the CLI then says no ledger runs)."""

    async def started() -> bool:
        await (await e2e.client()).get_workflow_handle(ledger_id("lztest")).describe()
        return True

    await assert_eventually(started, timeout=timeout)


def job_field(cluster: SlurmCluster, job_id: int, name: str) -> str:
    out = cluster.run("scontrol", "-o", "show", "job", str(job_id)).stdout
    match = re.search(rf"\b{name}=(\S*)", out)
    return match.group(1) if match else ""


def restarts(cluster: SlurmCluster, job_id: int) -> int:
    return int(job_field(cluster, job_id, "Restarts") or 0)


def restore_nodes(cluster: SlurmCluster) -> None:
    """Return nodes drained by a recovery to service, so the next scenario has all four."""
    for node in cluster.nodes:
        state = cluster.run("sinfo", "-h", "-n", node, "-o", "%t", check=False).stdout.strip()
        if state.startswith(("drain", "drng", "down")):
            cluster.run("scontrol", "update", f"NodeName={node}", "State=RESUME", check=False)


def json_lines(text: str) -> list[dict]:
    """A listing's ``--json`` output: one JSON object per line."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def lazarus_cli(e2e: E2EStack, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `lazarus ARGS` against the e2e stack, as a user in a shell would."""
    env = dict(os.environ, LAZARUS_CONFIG=str(e2e.config_path), SLURM_CONF=str(e2e.cluster.slurm_conf))
    proc = subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=90
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"lazarus {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc
