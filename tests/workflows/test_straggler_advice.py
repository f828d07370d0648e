"""A straggler finding is advice only (unless the policy opts in), and never blocks a later crash decision."""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceAction, Anomaly, AnomalyDetected, RecoveryState
from lazarus.models.slurm import JobState
from tests.workflows.harness import T0, Running, ended, job_input, send, started, xid79_on
from tests.workflows.test_monitor_mode_approvals import wait_state

pytestmark = pytest.mark.asyncio(loop_scope="session")


def straggler(node: str) -> AnomalyDetected:
    diag = Diagnosis(
        failure_kind=FailureKind.STRAGGLER,
        category=Category.HARDWARE,
        signature="straggler_throughput_drop",
        retry_advice=RetryAdvice.RETRY_EXCLUDING_NODES,
        implicated_nodes=[node],
        confidence=0.7,
    )
    return AnomalyDetected(
        anomaly=Anomaly(attempt=0, kind=FailureKind.STRAGGLER, diagnosis=diag, source="straggler", observed_at=T0)
    )


async def test_straggler_is_advice_only_and_a_later_crash_is_still_recovered(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), straggler("node1"))
        await wait_state(ts_env, run.handle, RecoveryState.WATCHING)
        await send(run.handle, xid79_on("node2"), ended(0))
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert [a.action for a in status.advice_history] == [AdviceAction.NONE, AdviceAction.RESTART]
    assert run.fake.restarts[0].exclude_nodes == ["node2"]


async def test_policy_can_opt_in_to_restarting_away_from_a_straggler(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT, act_on_stragglers=True)) as run:
        await send(run.handle, started(0), straggler("node1"))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        await run.handle.terminate("test done")
    assert run.fake.restarts[0].exclude_nodes == ["node1"]
