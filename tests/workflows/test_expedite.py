"""Expedited requeue, the rule and the workflow: only infrastructure and hardware failures jump the queue, only
when the policy turns it on, at most ``max_expedited`` times for the same failure; the boost is lifted once the
attempt runs, and everything is on the advice."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazarus.models.diagnosis import Category
from lazarus.models.policy import ExpeditePolicy, Mode, Policy
from lazarus.models.recovery import Advice, AdviceAction
from lazarus.models.slurm import JobState
from tests.workflows.harness import T0, Running, ended, job_input, progress, send, started, xid79_on
from workflows.expedite import expedite_rule

ON = Policy(expedite=ExpeditePolicy(enabled=True, max_expedited=2))


def _advice(generation: int, category: Category = Category.HARDWARE, signature: str = "nvrm_xid_79") -> Advice:
    return Advice(
        generation=generation,
        attempt=generation - 1,
        action=AdviceAction.RESTART,
        reason="r",
        category=category,
        signature=signature,
        created_at=T0,
    )


def test_expedite_is_off_by_default_and_records_nothing() -> None:
    verdict = expedite_rule(_advice(1), [], Policy())
    assert not verdict.expedite and verdict.reason is None


@pytest.mark.parametrize("category", [Category.HARDWARE, Category.INFRASTRUCTURE])
def test_an_infrastructure_or_hardware_restart_is_expedited(category: Category) -> None:
    verdict = expedite_rule(_advice(1, category), [], ON)
    assert verdict.expedite and verdict.reason is not None and "expedited" in verdict.reason


@pytest.mark.parametrize("category", [Category.APPLICATION, Category.UNKNOWN])
def test_an_application_or_unknown_failure_never_jumps_the_queue(category: Category) -> None:
    verdict = expedite_rule(_advice(1, category, "python_key_error"), [], ON)
    assert not verdict.expedite and "waits like everyone else" in (verdict.reason or "")


def test_a_job_that_ran_out_of_its_time_limit_never_jumps_the_queue() -> None:
    verdict = expedite_rule(_advice(1, Category.INFRASTRUCTURE, "slurm_time_limit"), [], ON)
    assert not verdict.expedite and "time running out" in (verdict.reason or "")


def test_after_max_expedited_identical_failures_the_job_waits_like_everyone_else() -> None:
    earlier = [_advice(1), _advice(2)]
    assert expedite_rule(_advice(2), earlier[:1], ON).expedite
    verdict = expedite_rule(_advice(3), earlier, ON)
    assert not verdict.expedite and "max_expedited 2" in (verdict.reason or "")


def test_a_different_failure_starts_its_own_count() -> None:
    earlier = [_advice(1), _advice(2)]
    assert expedite_rule(_advice(3, Category.INFRASTRUCTURE, "slurm_node_fail"), earlier, ON).expedite


def test_a_job_comment_may_turn_the_expedite_off_never_on() -> None:
    assert not ON.expedite.tightened(ExpeditePolicy(enabled=False)).enabled
    assert not Policy().expedite.tightened(ExpeditePolicy(enabled=True)).enabled
    assert ON.expedite.tightened(ExpeditePolicy(enabled=True, max_expedited=9)).max_expedited == 2


@pytest.mark.asyncio(loop_scope="session")
async def test_a_hardware_restart_is_expedited_recorded_and_lifted_once_it_runs(ts_env) -> None:
    async with Running(ts_env.client, job_input(Mode.ACT, expedite={"enabled": True})) as run:
        await send(run.handle, started(0), progress(0, 100, T0, checkpoint=100), xid79_on("node2"), ended(0))
        await send(
            run.handle,
            started(1, nodes=("node1", "node3"), excluded=("node2",)),
            progress(1, 200, T0 + timedelta(minutes=1), checkpoint=200),
            ended(1, JobState.COMPLETED, 0),
        )
        status = await run.handle.result()
    assert [r.expedite for r in run.fake.restarts] == [True]
    advice = status.advice_history[0]
    assert advice.expedite and advice.expedited is not None and advice.expedited.done
    assert advice.expedite_lifted is True
    assert [(lift.attempt, lift.boosted, lift.restore) for lift in run.fake.lifts] == [(1, 500, 100)]


@pytest.mark.asyncio(loop_scope="session")
async def test_with_the_policy_off_nothing_is_expedited_or_lifted(ts_env) -> None:
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, nodes=("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert [r.expedite for r in run.fake.restarts] == [False] and run.fake.lifts == []
    assert status.advice_history[0].expedite_reason is None and status.advice_history[0].expedited is None


def test_a_restart_that_is_not_expedited_is_sent_as_the_release_before_expedite_would_take_it() -> None:
    """Rolling upgrade: an older scheduler worker forbids unknown fields, so ``expedite`` travels only when on."""
    from temporalio.contrib.pydantic import pydantic_data_converter

    from lazarus.models.slurm import RestartRequest

    def sent(req: RestartRequest) -> dict:
        [payload] = pydantic_data_converter.payload_converter.to_payloads([req])
        return __import__("json").loads(payload.data)

    assert not {"expedite", "lost_nodes"} & set(sent(RestartRequest(job_id=1, expected_attempt=0)))
    assert sent(RestartRequest(job_id=1, expected_attempt=0, expedite=True))["expedite"] is True
    [back] = pydantic_data_converter.payload_converter.from_payloads(
        pydantic_data_converter.payload_converter.to_payloads([RestartRequest(job_id=1, expected_attempt=0)]),
        [RestartRequest],
    )
    assert back.expedite is False
