"""At-least-once delivery of one job's events to its workflow.

An event counts as reported only once its signal succeeded: events wait in the
job's outbox, in order, and what a failed signal left there is sent again in
the next cycle. Each event carries an id, ``<job>/<attempt>/<kind>/<n>``, that
is the same whenever the same event is sent again, so the workflow applies it
once (``workflows/transitions.py``) even when a signal reached the server
although the client saw an error. ``n`` is 0 for what happens once per
attempt (its start, its end) and a digest of the content otherwise (a progress
digest, an anomaly, a note), so a restarted telemetry worker never reuses the
id of a different event.

The outbox is bounded: a newer progress digest replaces an unsent older one
(progress is a maximum), and beyond :data:`MAX_PENDING` events the oldest
digests and notes give way first, attempt starts, ends and anomalies last.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from loguru import logger

from lazarus.models.recovery import (
    AnomalyDetected,
    AttemptEnded,
    AttemptStarted,
    AttemptSuspension,
    LedgerNote,
    ProgressDigest,
    TelemetryNote,
)

JobEvent = (
    AttemptStarted | ProgressDigest | AttemptEnded | AnomalyDetected | TelemetryNote | AttemptSuspension | LedgerNote
)

MAX_PENDING = 64
_ONCE_PER_ATTEMPT = (AttemptStarted, AttemptEnded)
_EXPENDABLE = (ProgressDigest, TelemetryNote)


def event_id(job_id: int, event: JobEvent, attempt: int | None) -> str:
    """The event's delivery id; ``attempt`` is used for events that name none (notes)."""
    index = event.anomaly.attempt if isinstance(event, AnomalyDetected) else getattr(event, "attempt", attempt)
    if isinstance(event, _ONCE_PER_ATTEMPT):
        n = "0"
    else:
        n = hashlib.sha256(event.model_dump_json(exclude={"id"}).encode()).hexdigest()[:12]
    return f"{job_id}/{index if index is not None else '-'}/{event.type}/{n}"


@dataclass
class Outbox:
    """One job's events not yet delivered, oldest first."""

    job_id: int
    pending: list[JobEvent] = field(default_factory=list)

    def put(self, events: list[JobEvent], attempt: int | None) -> None:
        """Queue ``events`` (in order) with their ids; coalesce digests and keep the outbox bounded."""
        for event in events:
            if event.id is None:
                event = event.model_copy(update={"id": event_id(self.job_id, event, attempt)})
            if isinstance(event, ProgressDigest):
                older = [e for e in self.pending if isinstance(e, ProgressDigest) and e.attempt == event.attempt]
                if any(_same_silence(e, event) for e in older):
                    event = event.model_copy(update={"silent": True})  # a coalesced digest keeps the hang clock's word
                self.pending = [e for e in self.pending if e not in older]
            self.pending.append(event)
        while len(self.pending) > MAX_PENDING:
            victim = next((e for e in self.pending if isinstance(e, _EXPENDABLE)), self.pending[0])
            self.pending.remove(victim)
            logger.warning(f"job {self.job_id}: {MAX_PENDING} events wait for delivery; dropped {victim.id}")

    async def deliver(self, send: Callable[[JobEvent], Awaitable[object]]) -> int:
        """Send the waiting events in order, each leaving the outbox only once ``send`` returned; the first
        failure propagates and leaves it, and those after it, for the next try. Returns how many were sent."""
        sent = 0
        while self.pending:
            await send(self.pending[0])
            self.pending.pop(0)
            sent += 1
        return sent

    def clear(self) -> None:
        self.pending.clear()


def _same_silence(older: ProgressDigest, newer: ProgressDigest) -> bool:
    """``older`` said the silence reached the budget and ``newer`` shows no progress or no sight since."""
    return older.silent and (newer.last_progress_at == older.last_progress_at or newer.observed_at == older.observed_at)
