"""Who may answer advice, switch modes, drain or resume (pure rules): the caller's identity against
``authorization.operators``; the message's free-text ``operator`` is only a note."""

from __future__ import annotations

from lazarus.models.callers import Caller
from lazarus.models.recovery import Approval, Rejection
from workflows.answers import signed
from workflows.authorization import caller_refusal, decided_by

ALICE = Caller(name="alice")


def test_without_operators_everyone_who_reaches_the_namespace_is_permitted():
    assert caller_refusal([], None, "approve advice") is None
    assert caller_refusal([], Caller(name="mallory"), "approve advice") is None


def test_a_listed_caller_is_permitted():
    assert caller_refusal(["bob", "alice"], ALICE, "drain node node1") is None


def test_a_caller_not_listed_is_refused_with_who_what_and_where_the_list_is():
    refusal = caller_refusal(["alice"], Caller(name="mallory"), "switch modes")
    assert (
        refusal == "mallory is not permitted to switch modes: only the operators in authorization.operators may (alice)"
    )


def test_a_message_without_a_caller_is_refused_when_operators_are_configured():
    refusal = caller_refusal(["alice"], None, "reject advice")
    assert refusal is not None and refusal.startswith("not permitted to reject advice: the message carries no caller")


def test_a_certificate_subject_is_matched_by_its_cn_and_named_as_one():
    cert = Caller(name="alice", source="certificate")
    assert caller_refusal(["alice"], cert, "approve advice") is None
    assert "alice (certificate CN) is not permitted" in (caller_refusal(["bob"], cert, "approve advice") or "")


def test_the_free_text_operator_never_stands_in_for_the_caller():
    assert caller_refusal(["alice"], Caller(name="mallory"), "approve advice") is not None  # whatever it wrote
    assert decided_by(Caller(name="mallory"), "alice") == "mallory (note: alice)"
    assert decided_by(ALICE, "alice") == "alice"


def test_without_a_caller_the_record_keeps_the_note_as_before():
    assert decided_by(None, "ui") == "ui"


def test_an_accepted_answer_is_recorded_as_decided_by_its_caller():
    assert signed(Approval(generation=2, operator="on-call"), ALICE).operator == "alice (note: on-call)"
    rejection = signed(Rejection(generation=2, operator="alice", comment="no"), ALICE)
    assert isinstance(rejection, Rejection) and rejection.operator == "alice" and rejection.comment == "no"
    assert signed(Approval(generation=2, operator="ui"), None).operator == "ui"
