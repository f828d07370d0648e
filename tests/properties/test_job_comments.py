"""Job comments: whatever a job writes in its Slurm comment gives a parsed opt-in or one clear reason.

The comment is the job owner's text, read by a service that runs as an
operator: huge or deeply nested JSON, unknown keys, values of any type and
text built to look like shell or terminal commands must never raise anything
but :class:`JobCommentError`, whose message is one printable line of bounded
length (it is shown in workflow state and in the CLI). An accepted opt-in
never asks for more than the operator's policy allows.
"""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from lazarus.errors import JobCommentError
from lazarus.models.policy import JOB_OVERRIDABLE, Mode, OnStop, Policy
from lazarus.telemetry.optin import MAX_COMMENT_BYTES, OptIn, parse_opt_in
from tests.properties.strategies import HOSTILE_SNIPPETS, hostile_text, huge_ints, json_values

POLICIES = {
    "default": Policy(),
    "strict": Policy(max_attempts=4, max_attempts_without_checkpoint=2),
    "acting": Policy(mode=Mode.ACT),
    "patient": Policy(on_stop=OnStop.KEEP_RUNNING),
}
MAX_REASON_CHARS = 1000

override_values = st.one_of(huge_ints, st.floats(), json_values, st.sampled_from(["PT5M", "1h", "00:10:00", "-1"]))
sections = st.dictionaries(
    st.one_of(
        st.sampled_from(sorted(JOB_OVERRIDABLE | {"policy", "mode"})),
        st.text(max_size=10),
        st.sampled_from(HOSTILE_SNIPPETS),
    ),
    st.one_of(
        override_values,
        st.sampled_from([*POLICIES, "act", "monitor", "cancel", "keep_running"]),
        st.sampled_from(HOSTILE_SNIPPETS),
    ),
    max_size=5,
)
comments = st.one_of(
    hostile_text,
    json_values.map(json.dumps),
    sections.map(lambda section: json.dumps({"lazarus": section})),
    st.tuples(sections, st.dictionaries(st.text(max_size=8), json_values, max_size=3)).map(
        lambda pair: json.dumps({**pair[1], "lazarus": pair[0]})
    ),
)


def opt_in_or_reason(comment: str) -> OptIn | None:
    """Parse; a JobCommentError with one clear line is an accepted answer (None), anything else fails."""
    try:
        return parse_opt_in(comment, POLICIES)
    except JobCommentError as error:
        reason = str(error)
        assert reason and reason.isprintable(), reason  # one line, no terminal escapes, no NUL
        assert len(reason) <= MAX_REASON_CHARS
        return None


@given(comments)
@example('{"lazarus": ' + "[" * 2000 + "]" * 2000 + "}")  # nested past the recursion limit, under 4 KiB
@example('{"lazarus": {"policy": "default", "\\u001b[2J\\n": 1}}')  # an unknown key with terminal escapes
@example('{"lazarus": {"policy": "' + "\\u001b" * 700 + '"}}')  # an escaped policy name
@example('{"lazarus": {"hang_budget": 1e308}}')
@example('{"lazarus": {"hang_budget": 100000000000000000000000000000}}')
@example('{"lazarus": {"max_attempts": true}}')
@example("\x1b]0;owned\x07{bad json")
@example("\udcff")  # a lone surrogate, as a JSON escape in squeue's output can produce
def test_any_comment_gives_an_opt_in_or_one_clear_reason(comment):
    opted = opt_in_or_reason(comment)
    if opted is not None:
        assert opted.policy_name in POLICIES


@given(st.integers(1, 4000), st.sampled_from(["[", '{"a":']))
def test_deep_nesting_gives_a_reason(depth, opener):
    opt_in_or_reason('{"lazarus": ' + opener * depth)


@given(st.text(min_size=1, max_size=20).map(lambda text: text * (MAX_COMMENT_BYTES // len(text.encode()) + 1)))
def test_a_comment_over_the_size_limit_gives_a_reason(comment):
    assert opt_in_or_reason(comment) is None


@given(sections, st.sampled_from(sorted(POLICIES)))
def test_an_accepted_opt_in_stays_within_the_operators_policy(section, name):
    opted = opt_in_or_reason(json.dumps({"lazarus": {**section, "policy": name}}))
    if opted is None:
        return
    base, policy = POLICIES[name], opted.policy
    assert policy.max_attempts <= base.max_attempts
    assert policy.max_attempts_without_checkpoint <= base.max_attempts_without_checkpoint
    assert policy.hang_budget <= base.hang_budget_max
    assert policy.startup_grace <= max(base.startup_grace, base.hang_budget_max)
    assert policy.mode is not Mode.ACT or base.mode is Mode.ACT
    assert policy.on_stop.rank >= base.on_stop.rank  # a stopped job gives its allocation back at least as often
    assert {key: value for key, value in policy.model_dump().items() if key not in JOB_OVERRIDABLE | {"mode"}} == {
        key: value for key, value in base.model_dump().items() if key not in JOB_OVERRIDABLE | {"mode"}
    }
