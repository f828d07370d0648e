"""What `lazarus show` and `lazarus advice list` say is what is in force: a start-up grace the policy
raised, the hang budget and deadline the watchdog applies, the last progress seen (and when), and every
answer the workflow refused although its sender was told the signal succeeded."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from lazarus.models.names import workflow_id
from lazarus.models.recovery import RecoveryState, Rejection
from tests.conftest import assert_eventually, submit_job
from tests.e2e.helpers import json_lines, lazarus_cli, restarts, wait_state
from tests.e2e.stack import GRACE_POLICY, JOB_PREFIX, POLICY, E2EStack, submit_training
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")


def temporal(e2e: E2EStack, *args: str) -> subprocess.CompletedProcess[str]:
    """The Temporal CLI against the e2e server, as an operator without Lazarus's CLI would use it."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "temporal"), *args, "--address", f"127.0.0.1:{e2e.port}"],
        capture_output=True,
        text=True,
        timeout=30,
    )


async def test_a_raised_startup_grace_is_noted_and_the_budget_and_deadline_in_force_are_shown(e2e, job_dir):
    job = submit_training(
        e2e.cluster,
        job_dir,
        comment={"lazarus": {"policy": GRACE_POLICY, "startup_grace": 10}},
        steps=80,
        step_time=0.25,
    )
    try:
        await wait_state(e2e, job, RecoveryState.WATCHING, timeout=30)

        async def watched():
            status = await e2e.status(job)
            return status if status.hang_budget is not None else None

        status = await assert_eventually(watched, timeout=30, interval=0.3)
        note = "startup_grace 10 s raised to the policy's minimum hang budget 30 s"
        assert status.opt_in_notes == [note]
        # the budget in force is the policy's floor (30 s) until telemetry learns one from the steps (the
        # policy's 40 s hang_budget here); which of the two depends on how soon the status is read
        assert status.hang_budget.budget in (timedelta(seconds=30), timedelta(seconds=40))
        assert status.hang_deadline is not None
        shown = lazarus_cli(e2e, "show", str(job)).stdout
        assert f"  note: {note}" in shown
        assert "  hang watchdog: budget " in shown and "unless progress comes first" in shown
    finally:
        e2e.cluster.run("scancel", str(job))


def printed(job_dir: Path, job: int) -> tuple[int, int]:
    """The last step and the last checkpoint the job itself printed (its LAZARUS progress lines)."""
    text = (job_dir / f"train-{job}.out").read_text()
    steps = [int(s) for s in re.findall(r"LAZARUS step=(\d+)", text)]
    checkpoints = [int(c) for c in re.findall(r"LAZARUS step=\d+ .*checkpoint=(\d+)", text)]
    return max(steps), max(checkpoints)


@pytest.mark.parametrize(
    "step_time", [0.1, 0.02], ids=["steps slower than a telemetry cycle", "the whole run within a few cycles"]
)
async def test_a_completed_attempt_shows_the_last_step_and_checkpoint_it_printed_and_how_fresh(e2e, job_dir, step_time):
    job = submit_training(e2e.cluster, job_dir, steps=40, ckpt_every=5, step_time=step_time)
    final = await wait_state(e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, timeout=90)
    attempt = final.attempts[0]
    assert final.state == RecoveryState.COMPLETED
    assert printed(job_dir, job) == (40, 40)
    assert (attempt.last_step, attempt.last_checkpoint) == (40, 40)  # the final digest: nothing throttled away
    seen, progress = attempt.observed_at, attempt.last_progress_at
    fresh = f"as of {progress:%H:%M:%S})"
    if seen - progress >= timedelta(seconds=1):
        fresh = f"as of {seen:%H:%M:%S}; last progress line at {progress:%H:%M:%S})"
    assert f"    progress: step 40, checkpoint 40 ({fresh}" in lazarus_cli(e2e, "show", str(job)).stdout


# a job that ends right after printing more than telemetry reads from a log in one cycle (4 MiB), its
# last progress line at the very end
BURST_THEN_END = f"""#!/bin/bash
echo "LAZARUS step=1 loss=3.0"
sleep 3
{sys.executable} -c "import sys; sys.stdout.writelines('x' * 999 + '\\n' for _ in range(20000))"
echo "LAZARUS step=40 loss=1.0 checkpoint=40"
"""


async def test_an_attempt_ending_right_after_a_burst_of_output_still_shows_its_last_step_and_checkpoint(e2e, job_dir):
    job = submit_job(
        e2e.cluster,
        BURST_THEN_END,
        job_name=f"{JOB_PREFIX}burst",
        nodes=1,
        output=str(job_dir / "burst-%j.out"),
        comment=json.dumps({"lazarus": {"policy": POLICY}}),
    )
    final = await wait_state(e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, timeout=90)
    assert (job_dir / f"burst-{job}.out").stat().st_size > 16 << 20  # four cycles' worth of reading
    assert final.state == RecoveryState.COMPLETED
    attempt = final.attempts[0]
    assert (attempt.last_step, attempt.last_checkpoint) == (40, 40)
    assert "    progress: step 40, checkpoint 40 (as of " in lazarus_cli(e2e, "show", str(job)).stdout


async def test_an_approval_signal_with_a_stale_generation_is_refused_visibly(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH)
    status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
    wid = workflow_id("lztest", job)
    sent = temporal(
        e2e,
        "workflow",
        "signal",
        "--workflow-id",
        wid,
        "--name",
        "approve_advice",
        "--input",
        json.dumps({"generation": 99, "operator": "eve"}),
    )
    assert sent.returncode == 0, sent.stderr  # the sender is told it succeeded: the refusal must show elsewhere

    async def refused():
        return (await e2e.status(job)).refused_answers or None

    [answer] = await assert_eventually(refused, timeout=20, interval=0.3)
    assert (answer.kind, answer.generation, answer.operator) == ("approve", 99, "eve")
    assert answer.reason == (
        f"stale advice generation 99: the advice awaiting approval is generation {status.advice.generation}"
    )
    line = f"last refused answer ({answer.at:%H:%M:%S}): {answer.describe()}"
    assert f"  {line}" in lazarus_cli(e2e, "show", str(job)).stdout
    listing = lazarus_cli(e2e, "advice", "list").stdout
    assert f"job {job} advice {status.advice.generation}" in listing and f"  {line}" in listing
    [row] = [r for r in json_lines(lazarus_cli(e2e, "advice", "list", "--json").stdout) if r["job_id"] == job]
    assert row["last_refused"]["reason"] == answer.reason
    details = temporal(e2e, "workflow", "metadata", "--workflow-id", wid)
    assert answer.describe() in details.stdout, details.stdout + details.stderr
    handle = (await e2e.client()).get_workflow_handle(wid)
    await handle.execute_update(
        JobRecoveryWorkflow.reject_advice, Rejection(generation=status.advice.generation, operator="bob")
    )
    await wait_state(e2e, job, RecoveryState.STOPPED, timeout=60)
    assert restarts(e2e.cluster, job) == 0
