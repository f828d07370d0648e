"""The pure rules of the node ledger."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from lazarus.models.ledger import Implication, LedgerPolicy, NodeRecord
from workflows.ledger_rules import drain_allowed, lemon_reason


def imp(node: str, job: int, at: datetime) -> Implication:
    return Implication(node=node, job_id=job, attempt=0, signature="xid_79_fallen_off_bus", category="hardware", at=at)


def test_lemon_rules_forget_what_came_before_an_operator_resume_and_keep_reasons_short():
    now = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
    record = NodeRecord(node="node9", implications=[imp("node9", job, now - timedelta(hours=2)) for job in range(20)])
    reason = lemon_reason(record, LedgerPolicy(lemon_job_count=3), now)
    assert "implicated by 20 jobs" in reason and len(reason) < 150
    record.resumed_at = now - timedelta(hours=1)
    assert lemon_reason(record, LedgerPolicy(lemon_job_count=3), now) is None


def test_implications_outside_the_window_do_not_count():
    now = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
    record = NodeRecord(node="n", implications=[imp("n", j, now - timedelta(days=2)) for j in range(5)])
    assert lemon_reason(record, LedgerPolicy(lemon_job_count=3, lemon_window=timedelta(days=1)), now) is None


def test_drain_budget_is_a_share_of_the_cluster():
    policy = LedgerPolicy(max_drain_fraction=0.25)
    assert drain_allowed(0, 4, policy) and not drain_allowed(1, 4, policy)
    assert not drain_allowed(0, 0, policy)
