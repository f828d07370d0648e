"""The goodput model (lazarus/goodput.py): what any estimate must satisfy, whatever its inputs.

ETTR is a share of wall time, so it lies in (0, 1]; more failures or a slower recovery never raise it; a
job's failures grow with its GPU count, so the time it loses per hour of training does too; and the three cases
differ only in how long each takes to run the job again. The last tests pin the documented defaults: the
published failure count they reproduce, and the order of the three cases in docs/goodput.md's table.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from lazarus.goodput import (
    LLAMA3,
    Case,
    FailureRate,
    Fault,
    Inputs,
    JobCosts,
    Latencies,
    downtime,
    estimate,
    estimate_one,
    ettr,
)

seconds = st.floats(min_value=0, max_value=30 * 86400, allow_nan=False)
rates = st.floats(min_value=0, max_value=1e4, allow_nan=False)
latencies = st.builds(Latencies, **{field: seconds for field in Latencies.model_fields})
job_costs = st.builds(
    JobCosts,
    checkpoint_interval=st.floats(min_value=1, max_value=86400, allow_nan=False),
    restart_cost=seconds,
    queue_wait=seconds,
)
failure_rates = st.builds(
    FailureRate,
    interruptions=st.floats(min_value=0.01, max_value=1e5, allow_nan=False),
    days=st.floats(min_value=0.01, max_value=3650, allow_nan=False),
    gpus=st.integers(min_value=1, max_value=1_000_000),
)
mixes = st.dictionaries(st.sampled_from(list(Fault)), st.floats(min_value=0, max_value=1e4, allow_nan=False)).filter(
    lambda mix: sum(mix.values()) > 0
)
inputs = st.builds(
    Inputs,
    rate=failure_rates,
    mix=mixes,
    job=job_costs,
    latencies=latencies,
    gpus=st.lists(st.integers(min_value=1, max_value=200_000), min_size=1, max_size=3).map(tuple),
)


@given(rates, seconds)
def test_ettr_is_a_share_of_wall_time(failures_per_hour: float, downtime_s: float) -> None:
    assert 0 < ettr(failures_per_hour, downtime_s) <= 1


@given(seconds)
def test_a_job_that_never_fails_trains_all_the_time(downtime_s: float) -> None:
    assert ettr(0, downtime_s) == 1


@given(inputs)
def test_every_estimate_is_a_share_and_loses_at_most_the_whole_week(given_inputs: Inputs) -> None:
    for row in estimate(given_inputs):
        assert 0 < row.ettr <= 1
        assert 0 <= row.gpu_hours_lost_per_week <= row.gpus * 168
        assert row.downtime_per_failure_s >= row.to_running_s >= 0


@given(rates, rates, seconds)
def test_more_failures_never_raise_ettr(a: float, b: float, downtime_s: float) -> None:
    low, high = sorted((a, b))
    assert ettr(high, downtime_s) <= ettr(low, downtime_s)


@given(inputs, st.sampled_from(list(Latencies.model_fields)), st.floats(min_value=0, max_value=86400))
def test_a_slower_mechanism_never_raises_any_cases_ettr(given_inputs: Inputs, field: str, extra: float) -> None:
    slower = given_inputs.model_copy(
        update={
            "latencies": given_inputs.latencies.model_copy(
                update={field: getattr(given_inputs.latencies, field) + extra}
            )
        }
    )
    for before, after in zip(estimate(given_inputs), estimate(slower), strict=True):
        assert after.ettr <= before.ettr
        assert after.gpu_hours_lost_per_week >= before.gpu_hours_lost_per_week


@given(inputs, st.sampled_from(list(Case)), st.integers(min_value=1, max_value=100_000), st.integers(2, 16))
def test_a_jobs_failures_and_lost_time_per_hour_of_training_grow_with_its_gpu_count(
    given_inputs: Inputs, case: Case, gpus: int, factor: int
) -> None:
    small, large = estimate_one(given_inputs, case, gpus), estimate_one(given_inputs, case, gpus * factor)
    assert math.isclose(large.mtbf_hours * factor, small.mtbf_hours, rel_tol=1e-9)
    # 1/ETTR - 1 = λ·D: the time lost per hour of training is proportional to the GPU count
    assert math.isclose(1 / large.ettr - 1, factor * (1 / small.ettr - 1), rel_tol=1e-6, abs_tol=1e-9)
    assert large.ettr <= small.ettr
    assert large.gpu_hours_lost_per_week / large.gpus >= small.gpu_hours_lost_per_week / small.gpus


@given(inputs)
def test_when_every_mechanism_is_instant_the_cases_differ_by_nothing(given_inputs: Inputs) -> None:
    instant = given_inputs.model_copy(update={"latencies": Latencies(**dict.fromkeys(Latencies.model_fields, 0.0))})
    job = instant.job
    floors = {downtime(instant, case) for case in Case}
    assert len(floors) == 1
    assert floors.pop() == pytest.approx(job.queue_wait + job.restart_cost + job.checkpoint_interval / 2)


def test_half_a_checkpoint_interval_is_recomputed_per_failure() -> None:
    assert JobCosts(checkpoint_interval=1800).lost_work == 900


def test_slurm_alone_sees_a_lost_node_only_after_slurmd_timeout_and_never_excludes_a_faulty_one() -> None:
    lat = Latencies()
    assert lat.to_running(Case.SLURM, Fault.NODE_DOWN) == lat.slurmd_timeout + lat.requeue
    assert lat.to_running(Case.SLURM, Fault.HANG) == lat.collective_timeout + lat.requeue
    assert lat.to_running(Case.SLURM, Fault.BAD_NODE) == lat.response + lat.requeue  # a person must drain it
    assert lat.to_running(Case.SLURM, Fault.CRASH) == lat.requeue  # RequeueExit: at once, on the same nodes


def test_the_person_on_call_acts_on_every_failure_once_it_shows() -> None:
    lat = Latencies()
    assert lat.to_running(Case.ON_CALL, Fault.CRASH) == lat.response + lat.requeue
    assert lat.to_running(Case.ON_CALL, Fault.NODE_DOWN) == lat.slurmd_timeout + lat.response + lat.requeue
    assert lat.to_running(Case.ON_CALL, Fault.HANG) == lat.collective_timeout + lat.response + lat.requeue


def test_lazarus_answers_a_crash_in_its_measured_detection_plus_restart() -> None:
    lat = Latencies()
    assert lat.to_running(Case.LAZARUS, Fault.BAD_NODE) == pytest.approx(0.53 + 7.00)
    assert lat.to_running(Case.LAZARUS, Fault.HANG) == pytest.approx(120.54 + 7.00)


def test_the_default_rate_reproduces_llama_3s_count() -> None:
    row = estimate_one(Inputs(), Case.LAZARUS, LLAMA3.gpus)
    assert row.mtbf_hours == pytest.approx(54 * 24 / 419)


def test_with_the_documented_defaults_lazarus_loses_least_and_a_person_alone_most() -> None:
    rows = estimate(Inputs())
    for gpus in (1024, 16384):
        lost = {row.case: row.gpu_hours_lost_per_week for row in rows if row.gpus == gpus}
        assert lost[Case.LAZARUS] < lost[Case.SLURM] < lost[Case.ON_CALL]


@pytest.mark.parametrize(
    "update",
    [
        {"mix": {Fault.CRASH: -1.0}},
        {"mix": {Fault.CRASH: 0.0}},
        {"mix": {Fault.CRASH: float("inf")}},
        {"gpus": ()},
        {"gpus": (0,)},
    ],
    ids=["negative weight", "no weight", "infinite weight", "no job size", "zero GPUs"],
)
def test_inputs_out_of_range_are_refused(update: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Inputs(**update)  # type: ignore[arg-type]
