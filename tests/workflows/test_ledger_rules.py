"""The pure rules of the node ledger: lemon nodes are counted by users, a drain needs corroboration from outside
any one job's own output, the budget, reconciliation with Slurm, and size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.models.diagnosis import EvidenceSource
from lazarus.models.ledger import OUTSIDE_LAZARUS, Implication, LedgerPolicy, NodeHealthVerdict, NodeRecord
from lazarus.models.slurm import NodeState
from workflows.ledger_rules import (
    bound,
    corroboration,
    drain_allowed,
    drain_reason,
    lemon_reason,
    mark_drained,
    reconcile,
    waiting_note,
)

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def imp(
    node: str,
    job: int,
    at: datetime,
    user: str = "",
    drain: bool = False,
    source: EvidenceSource = EvidenceSource.JOB_OUTPUT,
) -> Implication:
    return Implication(
        node=node,
        job_id=job,
        attempt=0,
        signature="xid_79_fallen_off_bus",
        category="hardware",
        at=at,
        user=user,
        drain_requested=drain,
        source=source,
    )


def test_lemon_rules_forget_what_came_before_an_operator_resume_and_keep_reasons_short():
    record = NodeRecord(
        node="node9", implications=[imp("node9", job, NOW - timedelta(hours=2), user=f"u{job}") for job in range(20)]
    )
    reason = lemon_reason(record, LedgerPolicy(lemon_job_count=3), NOW)
    assert "implicated by jobs of 20 users (20 jobs: 15,16,17,18,19,...)" in reason and len(reason) < 150
    record.resumed_at = NOW - timedelta(hours=1)
    assert lemon_reason(record, LedgerPolicy(lemon_job_count=3), NOW) is None


def test_lemon_nodes_are_counted_by_users_not_job_ids():
    one_user = NodeRecord(node="n", implications=[imp("n", j, NOW, user="mallory") for j in range(10)])
    assert lemon_reason(one_user, LedgerPolicy(lemon_job_count=2), NOW) is None
    unknown = NodeRecord(node="n", implications=[imp("n", j, NOW) for j in range(10)])  # users not known: one voice
    assert lemon_reason(unknown, LedgerPolicy(lemon_job_count=2), NOW) is None
    two = NodeRecord(node="n", implications=[imp("n", 1, NOW, user="ann"), imp("n", 2, NOW, user="bob")])
    assert "jobs of 2 users" in lemon_reason(two, LedgerPolicy(lemon_job_count=2), NOW)


def test_implications_outside_the_window_do_not_count():
    record = NodeRecord(node="n", implications=[imp("n", j, NOW - timedelta(days=2), user=f"u{j}") for j in range(5)])
    assert lemon_reason(record, LedgerPolicy(lemon_job_count=3, lemon_window=timedelta(days=1)), NOW) is None


def test_one_jobs_drain_request_is_a_reason_but_not_its_own_corroboration():
    record = NodeRecord(node="n", implications=[imp("n", 7, NOW, user="ann", drain=True)])
    assert drain_reason(record, LedgerPolicy(), NOW) == "lazarus: xid_79_fallen_off_bus in job 7 attempt 0"
    assert corroboration(record, LedgerPolicy(), NOW, NodeState(name="n", state="MIXED")) is None
    assert corroboration(record, LedgerPolicy(), NOW, health=NodeHealthVerdict(node="n", failed=False)) is None
    assert waiting_note(record.implications[0], NOW).startswith(
        "excluded from job 7 only; drain waits for corroboration from outside the job"
    )


def test_corroboration_comes_from_slurm_the_node_agent_outside_evidence_or_several_users():
    policy = LedgerPolicy(corroborating_users=3)
    record = NodeRecord(node="n", implications=[imp("n", 7, NOW, user="ann", drain=True)])
    for state in ("DOWN", "IDLE+FAIL", "MIXED+NOT_RESPONDING", "IDLE*"):
        assert corroboration(record, policy, NOW, NodeState(name="n", state=state)).startswith("Slurm shows it")
    agent = NodeHealthVerdict(node="n", failed=True, detail="failed (Xid 79)")
    assert corroboration(record, policy, NOW, health=agent) == "its node agent reports it failed (Xid 79)"
    outside = record.model_copy(
        update={"implications": [*record.implications, imp("n", 8, NOW, source=EvidenceSource.SCHEDULER)]}
    )
    assert corroboration(outside, policy, NOW) == "scheduler evidence in job 8"
    users = [imp("n", 7 + i, NOW, user=u) for i, u in enumerate(("ann", "ann", "bob", "cid"))]
    assert corroboration(record.model_copy(update={"implications": users[:3]}), policy, NOW) is None
    assert (
        corroboration(record.model_copy(update={"implications": users}), policy, NOW) == "jobs of 3 users (ann,bob,cid)"
    )


def test_drain_budget_is_a_share_of_the_cluster():
    policy = LedgerPolicy(max_drain_fraction=0.25)
    assert drain_allowed(0, 4, policy) and not drain_allowed(1, 4, policy)
    assert not drain_allowed(0, 0, policy)


def test_reconciliation_follows_slurm_and_says_what_changed_outside_lazarus():
    now = NOW
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
    now = NOW
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
