"""The kill switch read at the moment of acting (activities/ledger.py), at 10,000 watched jobs (issue 11).

Every decision to act asks the node ledger for the cluster-wide mode; a correlated failure makes hundreds of
decisions at once, and each query is a workflow task on the ledger. So one read serves every decision made
within :data:`activities.ledger.MODE_FRESH_FOR` of it, and design §9 still holds: a read older than that is
never given again, a read that failed is never remembered, and an unreadable switch is an error (the workflow
then acts as monitor: in doubt, advice waits for a person).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.ledger import MODE_FRESH_FOR, LedgerActivities
from lazarus.models import names
from lazarus.models.policy import Mode

pytestmark = pytest.mark.asyncio
LEDGER = "lazarus-test-ledger"


class FakeLedger:
    """Serves the ledger's memo (after a short wait), counting the reads; ``fail`` makes them fail."""

    def __init__(self) -> None:
        self.queries, self.mode, self.fail = 0, None, False

    def get_workflow_handle(self, workflow_id: str) -> FakeLedger:
        return self

    async def describe(self, *args: Any, **kwargs: Any) -> FakeLedger:
        self.queries += 1
        await asyncio.sleep(0.05)
        if self.fail:
            raise RuntimeError("describe timed out")
        return self

    async def memo(self) -> dict[str, Any]:
        return {names.CLUSTER_MODE_MEMO: {"mode": self.mode, "set_by": None}}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_decisions_made_together_share_one_read_of_the_kill_switch() -> None:
    ledger, clock = FakeLedger(), Clock()
    acts = LedgerActivities(ledger, clock=clock)  # type: ignore[arg-type]
    modes = await asyncio.gather(*(acts.cluster_mode(LEDGER) for _ in range(200)))
    assert ledger.queries == 1 and {m.mode for m in modes} == {None}
    clock.now += MODE_FRESH_FOR.total_seconds() / 2
    await acts.cluster_mode(LEDGER)
    assert ledger.queries == 1


async def test_a_read_older_than_its_freshness_is_never_given_again() -> None:
    ledger, clock = FakeLedger(), Clock()
    acts = LedgerActivities(ledger, clock=clock)  # type: ignore[arg-type]
    assert (await acts.cluster_mode(LEDGER)).mode is None
    ledger.mode = Mode.MONITOR.value  # the kill switch, thrown
    clock.now += MODE_FRESH_FOR.total_seconds() + 0.1
    assert (await acts.cluster_mode(LEDGER)).mode == Mode.MONITOR and ledger.queries == 2
    clock.now += MODE_FRESH_FOR.total_seconds() + 0.1
    ledger.fail = True  # now unreadable: the read before it is stale, so nothing is given
    with pytest.raises(ApplicationError, match="cannot read the cluster-wide mode"):
        await acts.cluster_mode(LEDGER)


async def test_a_failed_read_is_not_remembered() -> None:
    ledger, clock = FakeLedger(), Clock()
    acts = LedgerActivities(ledger, clock=clock)  # type: ignore[arg-type]
    ledger.fail = True
    with pytest.raises(ApplicationError):
        await acts.cluster_mode(LEDGER)
    ledger.fail = False
    assert (await acts.cluster_mode(LEDGER)).mode is None and ledger.queries == 2
