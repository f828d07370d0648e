"""The opt-in comment: policy by name, overrides only within the operator's limits, clear errors."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from lazarus.errors import JobCommentError
from lazarus.models.policy import Mode, Policy
from lazarus.telemetry.optin import mentions_lazarus, parse_opt_in

POLICIES = {"default": Policy(), "strict": Policy(max_attempts=4, max_attempts_without_checkpoint=2)}


def comment(**section) -> str:
    return json.dumps({"lazarus": section})


def test_policy_by_name_with_overrides():
    opt = parse_opt_in(comment(policy="strict", hang_budget=600), POLICIES)
    assert opt.policy_name == "strict" and opt.policy.hang_budget == timedelta(minutes=10)


def test_overrides_cannot_loosen_the_operators_limits():
    opt = parse_opt_in(comment(policy="strict", max_attempts=99, max_attempts_without_checkpoint=50,
                               startup_grace=10**7, hang_budget=10**7), POLICIES)
    p = opt.policy
    assert (p.max_attempts, p.max_attempts_without_checkpoint) == (4, 2)
    assert p.hang_budget == POLICIES["strict"].hang_budget_max
    assert p.startup_grace <= max(POLICIES["strict"].startup_grace, POLICIES["strict"].hang_budget_max)


@pytest.mark.parametrize("text,message", [
    ("{bad", "not valid JSON"),
    ('{"other": 1}', 'with a "lazarus" object'),
    (comment(policy="nope"), "unknown policy 'nope'"),
    (comment(drain_implicated_nodes=False), "may not override"),
    (comment(mode="act"), "not for act mode"),
    (comment(hang_budget="soon"), "override hang_budget"),
    ("x" * 5000, "the limit is 4096"),
])
def test_bad_comments_get_one_clear_sentence(text, message):
    with pytest.raises(JobCommentError, match=message):
        parse_opt_in(text, POLICIES)


def test_a_job_may_ask_for_monitor_mode():
    assert parse_opt_in(comment(mode="monitor"), POLICIES).policy.mode == Mode.MONITOR


def test_jobs_that_never_mention_lazarus_are_ignored_silently():
    assert not mentions_lazarus("nightly eval run") and mentions_lazarus('{"lazarus": {}}')
