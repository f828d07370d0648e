"""An approval or rejection counts only for the job and cluster it names; refused signals stay on the record.

Pure rules first (no server), then the workflow under time skipping: an update meant for another job fails
and leaves the advice waiting; a signal for another cluster's job, or for a stale generation, is refused and
recorded on the job.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from temporalio.client import WorkflowUpdateFailedError

from lazarus.models.policy import Mode
from lazarus.models.recovery import MAX_REFUSED_ANSWERS, Approval, JobRecoveryInput, RecoveryState, Rejection
from tests.workflows.harness import Running, ended, job_input, send, started, xid79_on
from tests.workflows.test_monitor_mode_approvals import wait_state
from workflows.answers import misaddressed
from workflows.effects import AnswerRefused, Warn
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.transitions import apply

T = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
STATE = JobRecoveryInput(cluster="east", job_id=26)


def test_an_answer_naming_another_cluster_or_job_is_misaddressed():
    assert "cluster 'west'" in misaddressed(STATE, Approval(generation=1, operator="a", cluster="west", job_id=26))
    assert "for job 27" in misaddressed(STATE, Rejection(generation=1, operator="a", cluster="east", job_id=27))


def test_an_answer_naming_this_job_or_none_is_for_this_job():
    assert misaddressed(STATE, Approval(generation=1, operator="a", cluster="east", job_id=26)) is None
    assert misaddressed(STATE, Approval(generation=1, operator="a")) is None  # the Temporal UI names none


def test_a_refused_answer_is_recorded_with_who_sent_it_and_why_and_the_record_stays_bounded():
    state = STATE
    for i in range(MAX_REFUSED_ANSWERS + 5):
        state, effects = apply(state, AnswerRefused(Approval(generation=i + 1, operator=f"op{i}"), "stale"), T)
    assert len(state.refused_answers) == MAX_REFUSED_ANSWERS
    last = MAX_REFUSED_ANSWERS + 5
    newest = state.refused_answers[-1]
    assert (newest.kind, newest.generation, newest.operator, newest.reason, newest.at) == (
        "approve",
        last,
        f"op{last - 1}",
        "stale",
        T,
    )
    assert Warn in [type(e) for e in effects]


@pytest.mark.asyncio(loop_scope="session")
async def test_an_update_for_another_job_fails_and_the_advice_keeps_waiting(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        other = run.inp.job_id + 1
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await run.handle.execute_update(
                JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="eve", job_id=other, cluster="test")
            )
        assert f"for job {other}" in str(refused.value.cause)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.state == RecoveryState.AWAITING_APPROVAL and run.fake.restarts == []


@pytest.mark.asyncio(loop_scope="session")
async def test_signals_for_another_cluster_or_a_stale_generation_are_refused_and_recorded(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await run.handle.signal(
            JobRecoveryWorkflow.approve_advice_signal,
            Approval(generation=1, operator="eve", job_id=run.inp.job_id, cluster="west"),
        )
        await run.handle.signal(JobRecoveryWorkflow.reject_advice_signal, Rejection(generation=4, operator="bob"))
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.state == RecoveryState.AWAITING_APPROVAL and run.fake.restarts == []
    eve, bob = status.refused_answers
    assert (eve.kind, eve.operator) == ("approve", "eve") and "the answer is for a job of cluster 'west'" in eve.reason
    assert (bob.kind, bob.generation) == ("reject", 4) and "stale advice generation 4" in bob.reason
