"""Spec: the audit turns a job's recovery state and the ledger's log into records saying who, when, what, why
and on what evidence: an operator's approval carries their name and comment, act mode is Lazarus's own act,
an expiry is the decision watchdog's; a refused answer and the stop are listed; `--since` reads a time ago or
an ISO time."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

import pytest

from lazarus.cli.audit import render, since_arg
from lazarus.cli.audit_records import job_records, ledger_records
from lazarus.models.diagnosis import Category, Diagnosis, Evidence, FailureKind, RetryAdvice
from lazarus.models.ledger import LedgerAction, LedgerPolicy, LedgerView
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    Advice,
    AdviceAction,
    AdviceStatus,
    Anomaly,
    Attempt,
    JobStatus,
    RecoveryState,
    RefusedAnswer,
)

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def _status(advice: Advice, state: RecoveryState = RecoveryState.WATCHING, **more: object) -> JobStatus:
    diag = Diagnosis(
        failure_kind=FailureKind.CRASH,
        category=Category.HARDWARE,
        signature="xid_79_fallen_off_bus",
        retry_advice=RetryAdvice.RETRY_EXCLUDING_NODES,
        implicated_nodes=["node2"],
        confidence=0.95,
        explanation="GPU fell off the bus",
        evidence=[Evidence(file="train.out", line_no=42, text="NVRM: Xid 79", rule="xid79")],
    )
    attempt = Attempt(
        index=0,
        nodes=["node1", "node2"],
        anomaly=Anomaly(attempt=0, kind=FailureKind.CRASH, diagnosis=diag, observed_at=T0, recorded_at=T0),
        advice_generation=1,
        requeued_at=T0 + timedelta(seconds=9) if advice.status == AdviceStatus.EXECUTED else None,
        outcome="requeued as attempt 1 excluding node2" if advice.status == AdviceStatus.EXECUTED else None,
        ended_at=T0 + timedelta(seconds=1),
    )
    return JobStatus(
        cluster="east",
        job_id=42,
        state=state,
        mode=Mode.MONITOR,
        policy_name="default",
        attempts=[attempt],
        advice=advice,
        advice_history=[advice],
        **more,
    )


def _advice(status: AdviceStatus, by: str | None, comment: str | None = None) -> Advice:
    return Advice(
        generation=1,
        attempt=0,
        action=AdviceAction.RESTART,
        exclude_nodes=["node2"],
        drain_nodes=["node2"],
        reason="hardware failure on node2: restart excluding node2",
        evidence=["train.out:42: NVRM: Xid 79"],
        status=status,
        created_at=T0 + timedelta(seconds=1),
        decided_by=by,
        decided_at=T0 + timedelta(seconds=5) if status != AdviceStatus.PENDING else None,
        comment=comment,
    )


def _by_action(records):
    return {r.action: r for r in records}


def test_an_approved_and_executed_advice_is_the_operator_s_approval_then_lazarus_s_requeue():
    records = _by_action(job_records(_status(_advice(AdviceStatus.EXECUTED, "carol", "go")), "lazarus-east-42"))
    assert list(records) == ["detected", "requeued", "advised", "approved"]
    assert (records["approved"].who, records["approved"].why) == ("carol", "go")
    assert records["requeued"].who == "carol" and records["requeued"].evidence == ["excluded node2"]
    assert records["detected"].evidence == ["train.out:42: NVRM: Xid 79"]
    assert records["detected"].why == "GPU fell off the bus" and records["detected"].who == "lazarus (log)"
    assert records["advised"].what == "advice 1: restart excluding node2 draining node2"


def test_act_mode_is_lazarus_s_own_act_and_an_expiry_is_the_decision_watchdog_s():
    acted = _by_action(job_records(_status(_advice(AdviceStatus.EXECUTED, "lazarus (act mode)")), "w"))
    assert acted["acted"].who == "lazarus (act mode)"
    expired = _by_action(job_records(_status(_advice(AdviceStatus.EXPIRED, None)), "w"))
    assert expired["expired"].who == "lazarus (decision watchdog)"
    assert expired["expired"].why == "nobody answered in time"


def test_an_approval_not_executed_on_the_fresh_state_is_listed_with_the_reason():
    advice = _advice(AdviceStatus.NOT_EXECUTED, "carol", "go").model_copy(
        update={"not_executed_reason": "the job completed before the approval arrived"}
    )
    records = _by_action(job_records(_status(advice, RecoveryState.COMPLETED), "w"))
    assert records["approved"].who == "carol" and "requeued" not in records
    skipped = records["not-executed"]
    assert (skipped.who, skipped.what) == ("lazarus", "advice 1 not executed")
    assert skipped.why == "the job completed before the approval arrived" and skipped.at == advice.decided_at


def test_pending_advice_has_no_answer_yet_and_a_refused_answer_and_the_stop_are_listed():
    refused = RefusedAnswer(kind="approve", generation=5, operator="eve", reason="stale", at=T0)
    status = _status(
        _advice(AdviceStatus.PENDING, None), RecoveryState.STOPPED, refused_answers=[refused], stop_reason="rejected"
    )
    records = _by_action(job_records(status, "w", closed_at=T0 + timedelta(minutes=1)))
    assert "approved" not in records and "acted" not in records
    assert records["refused-approve"].who == "eve" and records["refused-approve"].why == "stale"
    assert records["stopped"].at == T0 + timedelta(minutes=1) and records["stopped"].why == "rejected"


def test_the_ledger_s_log_is_node_and_cluster_records():
    view = LedgerView(
        cluster="east",
        policy=LedgerPolicy(),
        nodes=[],
        actions=[
            LedgerAction(
                at=T0, action="drain", node="node2", by="lazarus", reason="xid", evidence=["job 42 attempt 0"]
            ),
            LedgerAction(at=T0, action="cluster-mode", by="alice", reason="cluster mode monitor"),
        ],
    )
    drain, mode = ledger_records(view, "lazarus-east-ledger")
    assert (drain.scope, drain.node, drain.who, drain.evidence) == ("node", "node2", "lazarus", ["job 42 attempt 0"])
    assert (mode.scope, mode.who, mode.what) == ("cluster", "alice", "cluster mode set: cluster mode monitor")
    assert render(drain).splitlines()[1].strip() == "why: xid"


def test_since_reads_a_time_ago_or_an_iso_time():
    assert abs(since_arg("24h") - (datetime.now(UTC) - timedelta(hours=24))) < timedelta(seconds=5)
    assert since_arg("2026-05-01T09:00:00") == T0
    with pytest.raises(argparse.ArgumentTypeError, match="30m, 24h or 7d"):
        since_arg("yesterday")
