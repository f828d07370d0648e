"""Opt-in through the job comment: malformed comments and unknown policies are reported and the job is
left alone; jobs that did not opt in are ignored; a request for act mode is accepted, with a note on what
became of it."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.service import RPCError

from lazarus.models.recovery import RecoveryState
from tests.e2e.helpers import lazarus_cli, restarts, wait_state
from tests.e2e.stack import JOB_PREFIX, POLICY, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

FAILS = dict(steps=10, fault="xid79", fault_rank=1, fault_step=3, fault_attempts="all")


async def test_malformed_comment_is_recorded_and_the_job_left_alone(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment='{"lazarus": {"policy": ', **FAILS)
    status = await wait_state(e2e, job, RecoveryState.IGNORED, timeout=30)
    assert "not valid JSON" in status.stop_reason
    await asyncio.sleep(5)
    assert restarts(e2e.cluster, job) == 0


async def test_unknown_policy_is_recorded_and_the_job_left_alone(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": "no-such-policy"}}, **FAILS)
    status = await wait_state(e2e, job, RecoveryState.IGNORED, timeout=30)
    assert "unknown policy 'no-such-policy'" in status.stop_reason


async def test_job_without_opt_in_is_ignored(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment="nightly eval", **FAILS)
    await asyncio.sleep(6)
    with pytest.raises(RPCError):
        await e2e.status(job)
    assert restarts(e2e.cluster, job) == 0
    assert JOB_PREFIX  # the job carries this session's prefix, so only the opt-in decided


async def test_asking_for_act_on_an_act_cluster_is_watched_with_a_note_that_it_was_not_needed(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "act"}},
                          steps=40, step_time=0.25)
    try:
        status = await wait_state(e2e, job, RecoveryState.WATCHING, RecoveryState.COMPLETED, timeout=30)
        note = 'the comment asks for "mode": "act"; not needed: the cluster is in act mode'
        assert status.mode.value == "act" and status.opt_in_notes[0].startswith(note)
        assert f"  note: {note}" in lazarus_cli(e2e, "show", str(job)).stdout
    finally:
        e2e.cluster.run("scancel", str(job))
