"""`lazarus spares` lists every pool the policies name, as the node ledger last checked it: one not checked yet
says so, a short one says which members wait for a free healthy node (the e2e test runs the command itself)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.cli.spares import _note, rows
from lazarus.models.ledger import LedgerPolicy, LedgerView
from lazarus.models.spares import SparePool, SparePoolState

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def view(*states: SparePoolState) -> LedgerView:
    return LedgerView(
        cluster="east",
        policy=LedgerPolicy(),
        nodes=[],
        spare_pools=[
            SparePool(reservation="big-run", count=2, retry_interval=timedelta(seconds=30)),
            SparePool(reservation="small", count=1),
        ],
        spares=list(states),
    )


def test_every_named_pool_is_listed_and_one_not_checked_yet_says_so() -> None:
    found = rows(view())
    assert [r["reservation"] for r in found] == ["big-run", "small"]
    assert found[0]["count"] == 2 and found[0]["retry_interval_s"] == 30
    assert _note(found[1]) == "not checked yet"


def test_a_short_pool_names_the_members_waiting_for_a_free_node() -> None:
    short = SparePoolState(
        reservation="big-run", count=2, members=["n1", "n2", "n3"], short=["n2"], short_since=NOW, checked_at=NOW
    )
    (row, _) = rows(view(short))
    assert _note(row).startswith("waiting for a free healthy node to replace n2 since 2026-11-30")
