"""The pure rules of the node ledger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.models.ledger import OUTSIDE_LAZARUS, Implication, LedgerPolicy, NodeRecord
from lazarus.models.slurm import NodeState
from workflows.ledger_rules import bound, drain_allowed, lemon_reason, mark_drained, reconcile


def imp(node: str, job: int, at: datetime) -> Implication:
    return Implication(node=node, job_id=job, attempt=0, signature="xid_79_fallen_off_bus", category="hardware", at=at)


def test_lemon_rules_forget_what_came_before_an_operator_resume_and_keep_reasons_short():
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    record = NodeRecord(node="node9", implications=[imp("node9", job, now - timedelta(hours=2)) for job in range(20)])
    reason = lemon_reason(record, LedgerPolicy(lemon_job_count=3), now)
    assert "implicated by 20 jobs" in reason and len(reason) < 150
    record.resumed_at = now - timedelta(hours=1)
    assert lemon_reason(record, LedgerPolicy(lemon_job_count=3), now) is None


def test_implications_outside_the_window_do_not_count():
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    record = NodeRecord(node="n", implications=[imp("n", j, now - timedelta(days=2)) for j in range(5)])
    assert lemon_reason(record, LedgerPolicy(lemon_job_count=3, lemon_window=timedelta(days=1)), now) is None


def test_drain_budget_is_a_share_of_the_cluster():
    policy = LedgerPolicy(max_drain_fraction=0.25)
    assert drain_allowed(0, 4, policy) and not drain_allowed(1, 4, policy)
    assert not drain_allowed(0, 0, policy)


def test_reconciliation_follows_slurm_and_says_what_changed_outside_lazarus():
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    record = NodeRecord(node="n")
    mark_drained(record, None, "lazarus: nvrm_xid_79 in job 7 attempt 0", now)
    assert reconcile(record, NodeState(name="n", state="IDLE+DRAIN"), now) is None and record.drained
    note = reconcile(record, NodeState(name="n", state="IDLE"), now)
    assert note.startswith("resumed outside Lazarus, seen at 2026-11-29 12:00:00")
    assert not record.drained and (record.resumed_by, record.resumed_at) == (OUTSIDE_LAZARUS, now)
    reconcile(record, NodeState(name="n", state="MIXED+DRAIN", reason="bad DIMM"), now)
    assert record.drained_by == OUTSIDE_LAZARUS and record.drain_reason == "bad DIMM"
    assert not record.drained_by_lazarus and len(record.history) == 2


def test_the_ledger_drops_what_no_longer_matters_and_keeps_the_newest_implications():
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    policy = LedgerPolicy(lemon_window=timedelta(hours=1), max_implications=10)
    nodes = {
        "expired": NodeRecord(
            node="expired", implications=[imp("expired", 1, now - timedelta(hours=3))], refused=["drain refused"] * 9
        ),
        "drained": NodeRecord(node="drained", drained_by_lazarus=True),
        "busy": NodeRecord(
            node="busy",
            implications=[imp("busy", j, now - timedelta(minutes=j)) for j in range(12)],
            refused=[f"refused {i}" for i in range(9)],
        ),
    }
    kept = bound(nodes, policy, now)
    assert sorted(kept) == ["busy", "drained"]
    assert sorted(i.job_id for i in kept["busy"].implications) == list(range(10))  # the newest ten
    assert kept["busy"].refused == [f"refused {i}" for i in range(4, 9)]
