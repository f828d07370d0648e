"""Opt-in through the job comment: malformed comments and unknown policies are reported and the job is
left alone; jobs that did not opt in are ignored; a request for act mode is accepted, with a note on what
became of it. A comment only tightens the operator's policy, and names only a policy the operator made
selectable."""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.service import RPCError

from lazarus.models.diagnosis import FailureKind
from lazarus.models.recovery import RecoveryState
from tests.conftest import assert_eventually, submit_job
from tests.e2e.helpers import lazarus_cli, restarts, wait_state
from tests.e2e.stack import HIDDEN_POLICY, JOB_PREFIX, POLICY, submit_training

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
    job = submit_training(
        e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "act"}}, steps=40, step_time=0.25
    )
    try:
        status = await wait_state(e2e, job, RecoveryState.WATCHING, RecoveryState.COMPLETED, timeout=30)
        note = 'the comment asks for "mode": "act"; not needed: the cluster is in act mode'
        assert status.mode.value == "act" and status.opt_in_notes[0].startswith(note)
        assert f"  note: {note}" in lazarus_cli(e2e, "show", str(job)).stdout
    finally:
        e2e.cluster.run("scancel", str(job))


async def test_a_comment_cannot_lengthen_the_start_up_grace(e2e, job_dir):
    """The policy allows 20 s to the first progress line; the comment asks for an hour. The job prints
    nothing: Lazarus calls the hang after the policy's 20 s, not the job's hour."""
    comment = json.dumps({"lazarus": {"policy": POLICY, "startup_grace": 3600, "hang_budget": 3600}})
    job = submit_job(
        e2e.cluster,
        "sleep 240\n",
        job_name=f"{JOB_PREFIX}silent",
        nodes=1,
        comment=comment,
        output=str(job_dir / "silent-%j.out"),
    )
    try:

        async def hang_recorded():
            status = await e2e.status(job)
            anomaly = status.attempts[0].anomaly if status.attempts else None
            return anomaly if anomaly is not None and anomaly.kind == FailureKind.HANG else None

        anomaly = await assert_eventually(hang_recorded, timeout=75, interval=1)
        assert anomaly.hang_budget_s is not None and anomaly.hang_budget_s <= 20
        status = await e2e.status(job)
        assert any("startup_grace" in note and "tighten" in note for note in status.opt_in_notes), status.opt_in_notes
    finally:
        e2e.cluster.run("scancel", str(job))


async def test_a_policy_the_operator_did_not_make_selectable_is_refused_and_the_job_left_alone(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": HIDDEN_POLICY}}, **FAILS)
    status = await wait_state(e2e, job, RecoveryState.IGNORED, timeout=30)
    assert f"policy {HIDDEN_POLICY!r} is not selectable" in status.stop_reason
    await asyncio.sleep(3)
    assert restarts(e2e.cluster, job) == 0
