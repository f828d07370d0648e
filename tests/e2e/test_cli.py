"""The `lazarus` CLI against the real stack: submit, watch, jobs, show, advice, mode, nodes."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from lazarus.models.recovery import RecoveryState
from tests.e2e.helpers import json_lines, restarts, restore_nodes, wait_state
from tests.e2e.stack import JOB_PREFIX, POLICY, REPO, E2EStack, submit_training, training_script

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


def lazarus(e2e: E2EStack, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LAZARUS_CONFIG=str(e2e.config_path), SLURM_CONF=str(e2e.cluster.slurm_conf))
    proc = subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"lazarus {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


def piped_into_head(e2e: E2EStack, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script in `{ echo first; lazarus ARGS; } | head -1`: its output meets a closed pipe."""
    env = dict(os.environ, LAZARUS_CONFIG=str(e2e.config_path), SLURM_CONF=str(e2e.cluster.slurm_conf))
    script = shlex.join([str(Path(sys.executable).with_name("lazarus")), *args])
    return subprocess.run(
        ["bash", "-c", f'exec 3>&2; {{ echo first; {script}; echo "status=$?" >&3; }} | head -1'],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_submit_adds_the_opt_in_and_show_prints_the_timeline(e2e, job_dir):
    script = job_dir / "train.sh"
    script.write_text(training_script(e2e.cluster, job_dir / "ckpt", steps=8, ckpt_every=4))
    out = lazarus(
        e2e,
        "submit",
        "--policy",
        POLICY,
        "--",
        f"--job-name={JOB_PREFIX}cli",
        "-N2",
        "--ntasks-per-node=1",
        "--time=3",
        f"--output={job_dir}/%j.out",
        str(script),
    ).stdout
    job = int(out.split()[3])
    status = await wait_state(e2e, job, RecoveryState.COMPLETED, timeout=60)
    assert status.policy_name == POLICY
    shown = lazarus(e2e, "show", str(job)).stdout
    assert f"job {job} on lztest: completed" in shown and "attempt 0: nodes" in shown
    assert json.loads(lazarus(e2e, "show", str(job), "--json").stdout)["state"] == "completed"

    async def listed():
        rows = json_lines(lazarus(e2e, "jobs", "--json").stdout)
        return [r for r in rows if r["job_id"] == job]

    for _ in range(40):  # visibility is eventually consistent
        rows = await listed()
        if rows and rows[0]["state"] == "completed":
            break
        await asyncio.sleep(0.25)
    assert rows[0]["state"] == "completed" and rows[0]["user"] == "root"
    for listing in (("jobs",), ("jobs", "--json"), ("show", str(job)), ("show", str(job), "--json")):
        piped = piped_into_head(e2e, *listing)
        assert (piped.stdout, piped.stderr) == ("first\n", "status=141\n"), listing
    for _ in range(20):  # the workflow closes just after it records the completed state
        finished = lazarus(e2e, "mode", "act", "--job", str(job), check=False)
        if finished.returncode:
            break
        await asyncio.sleep(0.25)
    assert finished.returncode == 2
    assert finished.stderr.startswith(f"lazarus: job {job} is no longer watched by Lazarus on cluster lztest")


async def test_watch_attaches_to_a_job_that_did_not_opt_in(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment="", steps=40, step_time=0.25)
    lazarus(e2e, "watch", str(job), "--policy", POLICY)
    status = await wait_state(e2e, job, RecoveryState.WATCHING, RecoveryState.COMPLETED, timeout=30)
    assert status.job_id == job
    e2e.cluster.run("scancel", str(job))
    await wait_state(e2e, job, RecoveryState.STOPPED, timeout=30)


async def test_operator_approves_advice_from_the_cli(e2e, job_dir):
    job = submit_training(
        e2e.cluster,
        job_dir,
        comment={"lazarus": {"policy": POLICY, "mode": "monitor"}},
        steps=20,
        ckpt_every=5,
        fault="xid79",
        fault_rank=1,
        fault_step=8,
        fault_attempts="0",
    )
    await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
    listing = json_lines(lazarus(e2e, "advice", "list", "--json").stdout)
    [mine] = [row for row in listing if row["job_id"] == job]
    refused = lazarus(e2e, "advice", "approve", str(job), "--generation", "5", check=False)
    assert refused.returncode == 2 and "stale advice generation 5" in refused.stderr
    assert "Traceback" not in refused.stderr
    out = lazarus(e2e, "advice", "approve", str(job), "--comment", "looks right").stdout
    assert f"advice {mine['advice']['generation']} approved" in out
    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    assert final.state == RecoveryState.COMPLETED and restarts(e2e.cluster, job) == 1
    nodes = json.loads(lazarus(e2e, "nodes", "--json").stdout)
    bad = final.attempts[0].anomaly.diagnosis.implicated_nodes[0]
    assert any(r["node"] == bad and any(i["job_id"] == job for i in r["implications"]) for r in nodes["nodes"])
    out = lazarus(e2e, "nodes", "resume", bad).stdout
    assert f"{bad}: returned to service by" in out
    restore_nodes(e2e.cluster)


async def test_kill_switch_returns_running_and_new_jobs_to_monitor(e2e, job_dir):
    running = submit_training(e2e.cluster, job_dir, steps=60, step_time=0.25)
    await wait_state(e2e, running, RecoveryState.WATCHING, timeout=30)
    out = lazarus(e2e, "mode", "monitor").stdout
    assert "new jobs will start in it too" in out
    for _ in range(20):
        if (await e2e.status(running)).mode.value == "monitor":
            break
        await asyncio.sleep(0.25)
    assert (await e2e.status(running)).mode.value == "monitor"
    e2e.cluster.run("scancel", str(running))
    crashing = submit_training(
        e2e.cluster, job_dir, steps=20, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0"
    )
    status = await wait_state(e2e, crashing, RecoveryState.AWAITING_APPROVAL, timeout=60)
    assert status.mode.value == "monitor" and restarts(e2e.cluster, crashing) == 0
    lazarus(e2e, "mode", "act")  # lifting the switch executes the pending advice (and restores the default)
    final = await wait_state(e2e, crashing, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=120)
    assert final.state == RecoveryState.COMPLETED and restarts(e2e.cluster, crashing) == 1
    restore_nodes(e2e.cluster)


@pytest.mark.parametrize(
    "args",
    [
        ("show", "999999"),
        ("show", "999999", "--json"),
        ("mode", "act", "--job", "999999"),
        ("advice", "approve", "999999"),
        ("advice", "approve", "999999", "--generation", "1"),
        ("advice", "reject", "999999", "--generation", "1"),
    ],
)
async def test_a_command_about_an_unknown_job_says_it_is_not_watched(e2e, args):
    proc = lazarus(e2e, *args, check=False)
    assert proc.returncode == 2
    assert proc.stderr == "lazarus: job 999999 is not watched by Lazarus on cluster lztest\n"


async def test_operator_drains_and_resumes_a_node_from_the_cli(e2e):
    for _ in range(60):  # the telemetry worker starts the ledger on its first cycle
        if lazarus(e2e, "nodes", "--json", check=False).returncode == 0:
            break
        await asyncio.sleep(0.5)
    out = lazarus(e2e, "nodes", "drain", "node4", "--reason", "fan noise").stdout
    assert "node4: taken out of service by" in out
    # drained, or draining while a job still runs there
    assert e2e.cluster.run("sinfo", "-h", "-n", "node4", "-o", "%t").stdout.strip().startswith(("drain", "drng"))
    rows = json.loads(lazarus(e2e, "nodes", "--json").stdout)["nodes"]
    assert any(r["node"] == "node4" and r["drained_by"] == "root" for r in rows)
    lazarus(e2e, "nodes", "resume", "node4")
    bad = lazarus(e2e, "nodes", "drain", "node4;rm", "--reason", "x", check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
