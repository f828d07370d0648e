"""Pure rules of spare pools: which nodes the ledger distrusts, what a refill check records, and when a short
pool is looked at again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.models.ledger import LedgerPolicy, NodeRecord
from lazarus.models.spares import RefillResult, SparePool, Swap
from tests.workflows.ledger_harness import imp
from workflows import spare_rules

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POOL = SparePool(reservation="big-run", count=2, retry_interval=timedelta(seconds=30))


def test_drained_waiting_and_recently_implicated_nodes_are_distrusted_old_implications_are_not() -> None:
    nodes = {
        "node1": NodeRecord(node="node1", drained_by="alice"),
        "node2": NodeRecord(node="node2", waiting="drain waits"),
        "node3": NodeRecord(node="node3", implications=[imp("node3", 7, at=NOW - timedelta(hours=1))]),
        "node4": NodeRecord(node="node4", implications=[imp("node4", 8, at=NOW - timedelta(days=2))]),
        "node5": NodeRecord(node="node5"),
    }
    assert spare_rules.distrusted(nodes, LedgerPolicy(), NOW) == ["node1", "node2", "node3"]


def test_a_check_counts_refills_and_keeps_when_the_pool_first_went_short() -> None:
    short = spare_rules.checked(
        None, POOL, RefillResult(reservation="big-run", members=["a", "b", "c"], short=["a"], idle=["c"]), NOW
    )
    assert (short.spares_free, short.spares_used, short.short_since) == (1, 1, NOW)
    later = NOW + timedelta(seconds=30)
    again = spare_rules.checked(
        short, POOL, RefillResult(reservation="big-run", members=["a", "b", "c"], short=["a"], idle=["c"]), later
    )
    assert again.short_since == NOW and spare_rules.newly_short(short, again) == []
    done = spare_rules.checked(
        again,
        POOL,
        RefillResult(reservation="big-run", members=["b", "c", "d"], swaps=[Swap(out="a", into="d")], idle=["c", "d"]),
        later,
    )
    assert (done.refills, done.short, done.short_since, done.spares_free) == (1, [], None, 2)


def test_only_a_short_pool_is_looked_at_again_after_its_retry_interval() -> None:
    fine = spare_rules.checked(None, POOL, RefillResult(reservation="big-run", members=["a"], idle=["a"]), NOW)
    assert spare_rules.next_look([POOL], {"big-run": fine}) is None
    short = spare_rules.checked(None, POOL, RefillResult(reservation="big-run", members=["a"], short=["a"]), NOW)
    assert spare_rules.next_look([POOL], {"big-run": short}) == NOW + timedelta(seconds=30)
    failed = spare_rules.failed(fine, POOL, "check failed: Slurm has no reservation 'big-run'", NOW)
    assert spare_rules.next_look([POOL], {"big-run": failed}) is None  # the next reconciliation looks again
    assert failed.members == ["a"]  # the last known members stay
    assert spare_rules.kept([], {"big-run": failed}) == {}  # a pool no policy names any more is forgotten
