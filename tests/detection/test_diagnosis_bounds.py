"""What bounds the excerpt scores (benchmarks/diagnosis_bounds.py): the per-signature ceiling, the service's
answers (the reader's, or Slurm's and the hang watchdog's fallback) and the cost of each wrong advice."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "scripts")]

from diagnosis_accuracy import Example, Outcome  # noqa: E402
from diagnosis_bounds import (  # noqa: E402
    apply_table,
    as_service,
    ceiling,
    costs,
    majority_table,
    where_missed,
)

NONE = {"failure_kind": "none", "category": "unknown", "retry_advice": None}


def outcome(
    want: tuple[str, str, str | None], got: tuple[str, str, str | None] | None, signature: str | None = None
) -> Outcome:
    kind, category, advice = want
    expect = {"failure_kind": kind, "category": category, "retry_advice": advice, "implicated_nodes": []}
    answer = NONE if got is None else dict(zip(("failure_kind", "category", "retry_advice"), got, strict=True))
    return Outcome(example=Example(id="x", cls="c", files=[], expect=expect), got=answer, signature=signature)


APP_STOP = ("crash", "application", "stop")
UNKNOWN_RETRY = ("crash", "unknown", "retry_same_nodes")
HW_EXCLUDE = ("crash", "hardware", "retry_excluding_nodes")
BENIGN = ("none", "unknown", None)


def test_a_failure_the_reader_does_not_know_is_a_coverage_miss_and_a_wrong_field_an_answer_miss():
    outcomes = [
        outcome(APP_STOP, None),
        outcome(APP_STOP, UNKNOWN_RETRY, "sig"),
        outcome(HW_EXCLUDE, HW_EXCLUDE, "xid"),
        outcome(BENIGN, None),
    ]
    assert where_missed(outcomes) == {"failures": 3, "answered_none": 1, "found": 2, "found_wrong": 1}


def test_the_ceiling_gives_each_signature_its_majority_label_so_mixed_labels_under_one_signature_bound_it():
    outcomes = [
        outcome(APP_STOP, UNKNOWN_RETRY, "launch_failure"),
        outcome(APP_STOP, UNKNOWN_RETRY, "launch_failure"),
        outcome(HW_EXCLUDE, UNKNOWN_RETRY, "launch_failure"),
        outcome(UNKNOWN_RETRY, UNKNOWN_RETRY, "launch_failure"),
    ]
    bound = ceiling(outcomes)
    assert bound["matched_engine"]["retry_advice"] == 0.25
    assert bound["matched_ceiling"]["retry_advice"] == 0.5  # two stop labels: the best single answer
    assert bound["matched_ceiling"]["failure_kind"] == 1.0


def test_the_whole_set_ceiling_counts_the_unmatched_excerpts_as_one_more_group():
    outcomes = [outcome(BENIGN, None), outcome(BENIGN, None), outcome(APP_STOP, None), outcome(APP_STOP, APP_STOP, "s")]
    bound = ceiling(outcomes)
    assert bound["whole_set_ceiling"]["retry_advice"] == 0.75
    assert bound["joint_ceiling"] == 0.75


def test_a_table_fitted_on_one_set_answers_another_only_for_the_signatures_it_knows():
    pool = [outcome(APP_STOP, UNKNOWN_RETRY, "sig"), outcome(APP_STOP, UNKNOWN_RETRY, "sig")]
    table = majority_table(pool)
    other = apply_table([outcome(APP_STOP, UNKNOWN_RETRY, "sig"), outcome(APP_STOP, UNKNOWN_RETRY, "new")], table)
    assert other[0].got["retry_advice"] == "stop"
    assert other[1].got["retry_advice"] == "retry_same_nodes"


def test_in_service_a_crash_or_hang_the_reader_misses_gets_the_scheduler_or_watchdog_fallback():
    hang = ("hang", "infrastructure", "retry_same_nodes")
    straggler = ("straggler", "hardware", "retry_excluding_nodes")
    service = as_service(
        [outcome(APP_STOP, None), outcome(hang, None), outcome(straggler, None), outcome(BENIGN, None)]
    )
    assert service[0].got == {"failure_kind": "crash", "category": "unknown", "retry_advice": "retry_same_nodes"}
    assert service[1].got == {"failure_kind": "hang", "category": "unknown", "retry_advice": "retry_same_nodes"}
    assert service[2].got == NONE  # a straggler is judged by live throughput, which an excerpt does not hold
    assert service[3].got == NONE  # a healthy job is left alone


@pytest.mark.parametrize(
    ("want", "got", "cost"),
    [
        (BENIGN, UNKNOWN_RETRY, ("harm", "a healthy job restarted")),
        (UNKNOWN_RETRY, APP_STOP, ("left_to_a_person", "a job that would have resumed left to a person")),
        (APP_STOP, UNKNOWN_RETRY, ("bounded", "one more attempt before the job stops")),
        (HW_EXCLUDE, UNKNOWN_RETRY, ("bounded", "one more attempt on the suspect node")),
    ],
)
def test_each_wrong_advice_is_harm_left_to_a_person_or_bounded_against_a_cluster_without_lazarus(want, got, cost):
    counted = costs([outcome(want, got, "sig"), outcome(want, want if want != BENIGN else None, "sig")])
    kind, what = cost
    assert counted[kind] == 1 and counted["by_cost"] == {what: 1}


def test_advice_to_exclude_that_names_no_node_costs_what_a_restart_on_the_same_nodes_costs():
    named = outcome(UNKNOWN_RETRY, HW_EXCLUDE, "sig")
    named.nodes = ["gpu-node-3"]
    assert costs([named])["by_cost"] == {"a good node excluded": 1}
    assert costs([outcome(UNKNOWN_RETRY, HW_EXCLUDE, "sig")])["by_cost"] == {}
    assert costs([outcome(APP_STOP, HW_EXCLUDE, "sig")])["by_cost"] == {"one more attempt before the job stops": 1}


def test_a_failure_answered_none_costs_no_action_not_harm():
    counted = costs([outcome(APP_STOP, None)])
    assert counted == {"harm": 0, "left_to_a_person": 0, "bounded": 0, "no_action": 1, "by_cost": {}}
