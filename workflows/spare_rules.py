"""Pure rules of the spare pools the node ledger keeps: which nodes it distrusts, what a refill check
changed in a pool's record, and when a pool is looked at again.

A pool is a Slurm reservation a policy names (``Policy.spares``). The Slurm adapter does the swapping
(``slurm_refill_reservation``: read fresh, act if needed, verify); these rules only say what to pass it and
what its answer means. A node the ledger distrusts is never taken into a pool and is swapped out of one.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.models.ledger import LedgerPolicy, NodeRecord
from lazarus.models.spares import RefillResult, SparePool, SparePoolState
from workflows.ledger_rules import in_window

SWAPS_KEPT = 10
"""Replacements a pool's record keeps (the newest)."""
MAX_DISTRUSTED = 1024
"""Distrusted nodes passed to one refill (the newest records first would be arbitrary: the ledger is small)."""


def distrusted(nodes: dict[str, NodeRecord], policy: LedgerPolicy, now: datetime) -> list[str]:
    """Nodes the ledger distrusts: drained by anyone, waiting for a drain, or implicated by a job within the
    lemon window (and since any resume). Sorted, at most :data:`MAX_DISTRUSTED`."""
    bad = [
        name
        for name, record in nodes.items()
        if record.drained or record.waiting is not None or in_window(record, policy, now)
    ]
    return sorted(bad)[:MAX_DISTRUSTED]


def checked(previous: SparePoolState | None, pool: SparePool, result: RefillResult, now: datetime) -> SparePoolState:
    """The pool's record after a refill check that the adapter answered."""
    before = previous or SparePoolState(reservation=pool.reservation, count=pool.count)
    free = min(pool.count, len(result.idle))
    swaps = [f"{s.out} -> {s.into} at {now:%Y-%m-%d %H:%M:%S}" for s in result.swaps]
    still_short = bool(result.short) and bool(before.short)
    return SparePoolState(
        reservation=pool.reservation,
        count=pool.count,
        members=list(result.members),
        spares_free=free,
        spares_used=pool.count - free,
        refills=before.refills + len(result.swaps),
        swaps=[*before.swaps, *swaps][-SWAPS_KEPT:],
        short=list(result.short),
        short_since=(before.short_since if still_short else now) if result.short else None,
        checked_at=now,
    )


def failed(previous: SparePoolState | None, pool: SparePool, error: str, now: datetime) -> SparePoolState:
    """The pool's record after a refill check that failed (reservation unknown, scheduler unreadable): the last
    known members stay, with the error."""
    before = previous or SparePoolState(reservation=pool.reservation, count=pool.count)
    return before.model_copy(update={"count": pool.count, "error": error[:300], "checked_at": now})


def newly_short(previous: SparePoolState | None, state: SparePoolState) -> list[str]:
    """Members left untrusted for want of a free node that were not short at the previous check (told once)."""
    return [n for n in state.short if previous is None or n not in previous.short]


def next_look(pools: list[SparePool], states: dict[str, SparePoolState]) -> datetime | None:
    """When a short pool is looked at again; None when none is. A pool whose check failed (reservation unknown,
    scheduler unreadable) waits for the next implication or reconciliation: its timer would only repeat the
    error."""
    due = [
        state.checked_at + pool.retry_interval
        for pool in pools
        if (state := states.get(pool.reservation)) is not None and state.checked_at is not None and state.short
    ]
    return min(due, default=None)


def kept(pools: list[SparePool], states: dict[str, SparePoolState]) -> dict[str, SparePoolState]:
    """The records of the pools still named by a policy (a pool no policy names is forgotten, never touched)."""
    named = {p.reservation for p in pools}
    return {name: state for name, state in states.items() if name in named}


def retry_words(pool: SparePool) -> str:
    """How often a short pool is looked at again, for people."""
    seconds = pool.retry_interval / timedelta(seconds=1)
    return f"every {seconds:g} s"
