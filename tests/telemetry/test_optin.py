"""The opt-in comment: a policy the operator made selectable, by name; overrides that only tighten it (a
request to loosen it clamped, with a note); clear errors; a request for act mode accepted with a note; a
job's own comment kept next to the opt-in, in a shape the parser reads."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from lazarus.errors import JobCommentError
from lazarus.models.policy import ExpeditePolicy, Mode, OnStop, Policy
from lazarus.telemetry.optin import mentions_lazarus, opt_in_comment, parse_opt_in, requested_policy

POLICIES = {
    "default": Policy(),
    "strict": Policy(max_attempts=4, max_attempts_without_checkpoint=2, selectable=True),
    "watched": Policy(mode=Mode.MONITOR, selectable=True),
    "acting": Policy(mode=Mode.ACT, selectable=True),
    "operators-only": Policy(hang_budget=timedelta(hours=1)),
    "patient": Policy(on_stop=OnStop.KEEP_RUNNING, selectable=True),
}


def comment(**section) -> str:
    return json.dumps({"lazarus": section})


def test_policy_by_name_with_overrides():
    opt = parse_opt_in(comment(policy="strict", hang_budget=600), POLICIES)
    assert opt.policy_name == "strict" and opt.policy.hang_budget == timedelta(minutes=10)


def test_overrides_cannot_loosen_the_operators_policy():
    opt = parse_opt_in(
        comment(
            policy="strict", max_attempts=99, max_attempts_without_checkpoint=50, startup_grace=10**7, hang_budget=10**7
        ),
        POLICIES,
    )
    p, base = opt.policy, POLICIES["strict"]
    assert (p.max_attempts, p.max_attempts_without_checkpoint) == (4, 2)
    assert (p.hang_budget, p.startup_grace) == (base.hang_budget, base.startup_grace)
    assert len(opt.notes) == 4 and all("a job may only tighten policy 'strict'" in n for n in opt.notes)
    assert "hang_budget 10000000 s lowered to 1800 s" in " ".join(opt.notes)


def test_a_job_may_ask_to_be_cancelled_when_stopped_but_never_to_keep_its_allocation():
    """Cancelling gives the allocation back: it is the tighter choice (like a shorter hang budget)."""
    asked_cancel = parse_opt_in(comment(policy="patient", on_stop="cancel"), POLICIES)
    assert asked_cancel.policy.on_stop == OnStop.CANCEL and asked_cancel.notes == ()
    asked_keep = parse_opt_in(comment(on_stop="keep_running"), POLICIES)
    assert asked_keep.policy.on_stop == OnStop.CANCEL
    assert asked_keep.notes == ("on_stop keep_running changed to cancel: a job may only tighten policy 'default'",)


def test_a_job_may_turn_the_expedite_off_or_lower_its_count_but_never_turn_it_on():
    policies = {
        **POLICIES,
        "expedited": Policy(expedite=ExpeditePolicy(enabled=True, max_expedited=3), selectable=True),
    }
    off = parse_opt_in(comment(policy="expedited", expedite={"enabled": False}), policies)
    assert not off.policy.expedite.enabled and off.notes == ()
    fewer = parse_opt_in(comment(policy="expedited", expedite={"enabled": True, "max_expedited": 1}), policies)
    assert fewer.policy.expedite == ExpeditePolicy(enabled=True, max_expedited=1)
    asked_on = parse_opt_in(comment(expedite={"enabled": True}), POLICIES)
    assert not asked_on.policy.expedite.enabled
    assert len(asked_on.notes) == 1 and "never on, in policy 'default'" in asked_on.notes[0]


def test_overrides_may_tighten_the_operators_policy_without_a_note():
    opt = parse_opt_in(
        comment(
            policy="strict",
            max_attempts=2,
            max_attempts_without_checkpoint=1,
            startup_grace=300,
            hang_budget=600,
            mode="monitor",
        ),
        POLICIES,
    )
    p = opt.policy
    assert (p.max_attempts, p.max_attempts_without_checkpoint, p.mode) == (2, 1, Mode.MONITOR)
    assert (p.hang_budget, p.startup_grace) == (timedelta(minutes=10), timedelta(minutes=5))
    assert opt.notes == ()


def test_a_budget_below_the_policys_minimum_is_raised_to_it_with_a_note():
    opt = parse_opt_in(comment(hang_budget=1), POLICIES)
    assert opt.policy.hang_budget == POLICIES["default"].hang_budget_min
    assert opt.notes == ("hang_budget 1 s raised to the policy's minimum hang budget 120 s",)


def test_a_job_may_choose_the_default_policy_and_those_the_operator_made_selectable():
    assert parse_opt_in(comment(), POLICIES).policy_name == "default"
    assert parse_opt_in(comment(policy="strict"), POLICIES).policy_name == "strict"
    assert parse_opt_in(comment(), {"default": Policy(selectable=False)}).policy_name == "default"


def test_a_policy_the_operator_did_not_make_selectable_is_refused_and_not_offered():
    with pytest.raises(JobCommentError, match="policy 'operators-only' is not selectable by jobs") as refused:
        parse_opt_in(comment(policy="operators-only"), POLICIES)
    assert "a job may choose: acting, default, patient, strict, watched" in str(refused.value)
    with pytest.raises(JobCommentError, match=r"a job may choose: acting, default, patient, strict, watched$"):
        parse_opt_in(comment(policy="nope"), POLICIES)


@pytest.mark.parametrize(
    "text,message",
    [
        ("{bad", "not valid JSON"),
        ('{"other": 1}', 'with a "lazarus" object'),
        (comment(policy="nope"), "unknown policy 'nope'"),
        (comment(drain_implicated_nodes=False), "may not override"),
        (comment(selectable=True), "may not override"),
        (comment(mode="fast"), "override mode"),
        (comment(hang_budget="soon"), "override hang_budget"),
        ("x" * 5000, "the limit is 4096"),
    ],
)
def test_bad_comments_get_one_clear_sentence(text, message):
    with pytest.raises(JobCommentError, match=message):
        parse_opt_in(text, POLICIES)


def test_a_job_may_ask_for_monitor_mode():
    assert parse_opt_in(comment(mode="monitor"), POLICIES).policy.mode == Mode.MONITOR


def test_jobs_that_never_mention_lazarus_are_ignored_silently():
    assert not mentions_lazarus("nightly eval run") and mentions_lazarus('{"lazarus": {}}')


def test_asking_for_act_on_an_act_cluster_is_accepted_and_noted_as_not_needed():
    opt = parse_opt_in(comment(mode="act"), POLICIES, cluster_mode=Mode.ACT)
    assert opt.policy.mode is None  # the job follows the cluster's mode, whatever it becomes
    assert opt.notes == (
        'the comment asks for "mode": "act"; not needed: the cluster is in act mode '
        "(a job follows the cluster's mode)",
    )


def test_asking_for_act_on_a_monitor_cluster_is_clamped_to_monitor_with_a_note():
    opt = parse_opt_in(comment(mode="act"), POLICIES, cluster_mode=Mode.MONITOR)
    assert opt.policy.mode is None
    assert "clamped to the cluster's monitor mode" in opt.notes[0]


def test_asking_for_act_under_a_monitor_policy_is_clamped_to_the_policy():
    opt = parse_opt_in(comment(policy="watched", mode="act"), POLICIES, cluster_mode=Mode.ACT)
    assert opt.policy.mode == Mode.MONITOR and "policy 'watched' runs in monitor mode" in opt.notes[0]


def test_asking_for_act_under_an_acting_policy_is_noted_as_not_needed():
    opt = parse_opt_in(comment(policy="acting", mode="act"), POLICIES, cluster_mode=Mode.MONITOR)
    assert opt.policy.mode == Mode.ACT and "not needed: policy 'acting' already acts" in opt.notes[0]


def test_comments_without_a_mode_request_carry_no_note():
    assert parse_opt_in(comment(policy="acting"), POLICIES).notes == ()
    assert parse_opt_in(comment(mode="monitor"), POLICIES, cluster_mode=Mode.ACT).notes == ()


@pytest.mark.parametrize(
    "own,policy,expected",
    [
        (None, None, {"lazarus": {"policy": "default"}}),
        ("", "strict", {"lazarus": {"policy": "strict"}}),
        ("team=nlp", "strict", {"lazarus": {"policy": "strict"}, "comment": "team=nlp"}),
        ("42", None, {"lazarus": {"policy": "default"}, "comment": "42"}),
        ('{"team": "nlp"}', "strict", {"lazarus": {"policy": "strict"}, "team": "nlp"}),
        (
            '{"team": "nlp", "lazarus": {"policy": "strict", "max_attempts": 2}}',
            None,
            {"team": "nlp", "lazarus": {"policy": "strict", "max_attempts": 2}},
        ),
        (
            '{"lazarus": {"max_attempts": 2, "policy": "strict"}}',
            "default",
            {"lazarus": {"policy": "default", "max_attempts": 2}},
        ),
    ],
)
def test_the_users_own_comment_is_kept_next_to_the_opt_in(own, policy, expected):
    assert json.loads(opt_in_comment(policy, own)) == expected


@pytest.mark.parametrize(
    "own", [None, "team=nlp", "lazarus rocks", '{"team": "nlp"}', "[1, 2]", '{"lazarus": {"hang_budget": 300}}']
)
def test_the_parser_accepts_every_comment_submit_and_watch_build(own):
    built = opt_in_comment("strict", own)
    assert mentions_lazarus(built)
    assert parse_opt_in(built, POLICIES).policy_name == "strict"
    assert requested_policy(built) == "strict"


def test_a_lazarus_key_that_is_not_an_object_is_refused():
    with pytest.raises(JobCommentError, match='"lazarus" key that is not an object'):
        opt_in_comment("default", '{"lazarus": "yes"}')


@pytest.mark.parametrize(
    "text,name",
    [
        (comment(policy="nosuch"), "nosuch"),
        (comment(hang_budget=1), "default"),
        ("{bad", None),
        ('{"lazarus": {"policy": 3}}', None),
    ],
)
def test_the_requested_policy_is_read_even_from_a_comment_that_is_refused(text, name):
    assert requested_policy(text) == name


def test_a_startup_grace_below_the_minimum_hang_budget_is_raised_with_a_note():
    opt = parse_opt_in(comment(policy="default", startup_grace=30), POLICIES)
    assert opt.policy.startup_grace == POLICIES["default"].hang_budget_min
    assert opt.notes == ("startup_grace 30 s raised to the policy's minimum hang budget 120 s",)


def test_a_hang_budget_above_the_policys_is_lowered_to_it_with_a_note():
    opt = parse_opt_in(comment(policy="default", hang_budget=10**6), POLICIES)
    assert opt.notes == ("hang_budget 1000000 s lowered to 1800 s: a job may only tighten policy 'default'",)


def test_budgets_within_the_policys_bounds_carry_no_note():
    assert parse_opt_in(comment(policy="default", startup_grace=300, hang_budget=600), POLICIES).notes == ()
