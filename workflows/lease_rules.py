"""Pure rules of the telemetry lease: who may acquire, renew or release it, and how saved offsets stay bounded.

``now`` is always the workflow's time (``workflow.now()``), so every replica is judged by one clock: the
lease workflow's. A term is one grant to one holder, numbered by ``epoch``; only the current term can be
renewed or released, and a lapsed term cannot be revived (its holder acquires a new one), so a replica
that stopped because it could not renew never finds itself holding a term it had given up.
"""

from __future__ import annotations

from datetime import datetime

from lazarus.models.lease import (
    MAX_HANDOVERS,
    MAX_SAVED_OFFSETS,
    MAX_SAVED_PATH,
    Handover,
    LeaseGrant,
    LeaseRequest,
    LeaseState,
    LogOffset,
)


def held_by_other(state: LeaseState, holder: str, now: datetime) -> bool:
    """Another holder's term is still running."""
    return (
        state.holder is not None and state.holder != holder and state.expires_at is not None and now < state.expires_at
    )


def acquire_refusal(state: LeaseState, req: LeaseRequest, now: datetime) -> str | None:
    """Why ``req`` may not start a new term now (None: it may)."""
    if req.epoch is not None:
        return "an acquire names no epoch (it starts a new term)"
    if held_by_other(state, req.holder, now):
        until = state.expires_at.isoformat() if state.expires_at else "its term ends"
        return f"the lease is held by {state.holder} (term {state.epoch}) until {until}"
    return None


def term_refusal(state: LeaseState, req: LeaseRequest, now: datetime) -> str | None:
    """Why ``req`` may not renew or release its term (None: it is the current, unexpired term)."""
    if req.holder != state.holder or req.epoch != state.epoch:
        return (
            f"term {req.epoch} of {req.holder} is over: the lease is in term {state.epoch} of "
            f"{state.holder or 'nobody'}"
        )
    if state.expires_at is None or now >= state.expires_at:
        expired = state.expires_at.isoformat() if state.expires_at else "?"
        return f"term {req.epoch} of {req.holder} expired at {expired}"
    return None


def acquire(state: LeaseState, req: LeaseRequest, now: datetime) -> LeaseGrant:
    """Start a new term for ``req.holder`` (the caller checked :func:`acquire_refusal`)."""
    lapsed = state.holder if state.holder not in (None, req.holder) else None
    state.holder, state.epoch, state.expires_at = req.holder, state.epoch + 1, now + req.ttl
    state.handovers = [*state.handovers, Handover(holder=req.holder, epoch=state.epoch, at=now, previous=lapsed)]
    del state.handovers[:-MAX_HANDOVERS]
    save_offsets(state, req.offsets, req.forget)
    return LeaseGrant(holder=req.holder, epoch=state.epoch, expires_at=state.expires_at, offsets=dict(state.offsets))


def renew(state: LeaseState, req: LeaseRequest, now: datetime) -> LeaseGrant:
    """Extend the current term (the caller checked :func:`term_refusal`) and keep its offsets."""
    state.expires_at = now + req.ttl
    save_offsets(state, req.offsets, req.forget)
    return LeaseGrant(holder=req.holder, epoch=state.epoch, expires_at=state.expires_at)


def release(state: LeaseState, req: LeaseRequest) -> None:
    """End the current term now (the caller checked :func:`term_refusal`): anybody may acquire at once."""
    save_offsets(state, req.offsets, req.forget)
    state.holder, state.expires_at = None, None


def save_offsets(state: LeaseState, offsets: dict[str, LogOffset], forget: list[str]) -> None:
    """Keep the newest offsets, at most ``MAX_SAVED_OFFSETS`` of them: the least recently saved go first."""
    kept = {path: off for path, off in state.offsets.items() if path not in offsets and path not in forget}
    kept.update((path, off) for path, off in offsets.items() if len(path) <= MAX_SAVED_PATH)
    state.offsets = dict(list(kept.items())[-MAX_SAVED_OFFSETS:])
