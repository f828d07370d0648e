"""Three milestones, measured, on the real Slurm cluster and a real Temporal server (issue 12): a training
job with checkpoints crashes (Xid 79 on one node), is requeued and resumes from its checkpoint;
`lazarus show --json` gives, for the restarted attempt, when it was requeued, running, training again
(progress restored) and completed, in that order, with the checkpoint it resumed from and the steps lost; and
`lazarus goodput --milestones` takes that document as its measured restart cost."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from lazarus.models.recovery import RecoveryState
from tests.e2e.helpers import lazarus_cli, restore_nodes, wait_state
from tests.e2e.stack import submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

SLURM_RESOLUTION = timedelta(seconds=1)  # Slurm's start and end times are whole seconds


def when(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text)


async def test_a_restarted_job_gives_requeued_running_progress_restored_and_completed_in_order(e2e, job_dir):
    job = submit_training(
        e2e.cluster, job_dir, steps=30, ckpt_every=10, fault="xid79", fault_rank=1, fault_step=15, fault_attempts="0"
    )
    status = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    restore_nodes(e2e.cluster)
    assert status.state == RecoveryState.COMPLETED, status.stop_reason
    assert "attempt 1, resuming from checkpoint 10" in (job_dir / f"train-{job}.out").read_text()

    shown = json.loads(lazarus_cli(e2e, "show", str(job), "--json").stdout)
    first, second = shown["attempts"]
    row = next(r for r in shown["milestones"] if r["attempt"] == 1)
    fault, requeued, running = when(row["fault_at"]), when(row["requeued_at"]), when(row["running_at"])
    restored, completed = when(row["progress_restored_at"]), when(row["completed_at"])
    assert fault < requeued < running + SLURM_RESOLUTION
    assert running < restored < completed + SLURM_RESOLUTION
    assert row["resumed_from"] == first["last_checkpoint"] == 10
    assert row["first_step"] == 11
    assert row["steps_lost"] == first["last_step"] - first["last_checkpoint"] == 4  # crashed before step 15
    assert (second["resumed_from"], second["steps_lost"]) == (10, 4)

    text = lazarus_cli(e2e, "show", str(job)).stdout
    assert "-> progress restored" in text and "at step 11 (resumed from checkpoint 10, 4 steps lost)" in text

    # the same document is goodput's input: the restart cost is this attempt's running → progress restored
    shows = job_dir / "show.json"
    shows.write_text(json.dumps(shown))
    goodput = json.loads(lazarus_cli(e2e, "goodput", "--milestones", str(shows), "--json").stdout)
    assert goodput["measured"]["recoveries"] == 1
    assert goodput["inputs"]["job"]["restart_cost"] == pytest.approx(max(0.0, (restored - running).total_seconds()))
