"""At-least-once delivery: an event leaves a job's outbox only once its signal succeeded; ids are the same for
a resent event and different for a new one; the outbox stays bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from temporalio.service import RPCError, RPCStatusCode

from lazarus.models.recovery import AttemptEnded, AttemptStarted, ProgressDigest, TelemetryNote
from lazarus.models.slurm import JobState
from lazarus.telemetry.outbox import MAX_PENDING, Outbox, event_id

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)


class FlakySignal:
    """Fails the first ``failures`` sends (as a Temporal server that is down would), records the rest."""

    def __init__(self, failures: int) -> None:
        self.failures, self.sent = failures, []

    async def __call__(self, event) -> None:
        if self.failures:
            self.failures -= 1
            raise RPCError("connection refused", RPCStatusCode.UNAVAILABLE, b"")
        self.sent.append(event)


def end(attempt: int = 0) -> AttemptEnded:
    return AttemptEnded(attempt=attempt, state=JobState.COMPLETED, exit_code=0, at=T0)


def digest(step: int, attempt: int = 0) -> ProgressDigest:
    return ProgressDigest(attempt=attempt, step=step, last_progress_at=T0 + timedelta(seconds=step))


@pytest.mark.asyncio
async def test_an_event_whose_signal_failed_stays_and_is_sent_again_in_order():
    box = Outbox(7)
    box.put([AttemptStarted(attempt=0, nodes=["node1"], at=T0), end()], attempt=0)
    send = FlakySignal(failures=1)
    with pytest.raises(RPCError):
        await box.deliver(send)
    assert [e.type for e in box.pending] == ["attempt_started", "attempt_ended"] and send.sent == []
    assert await box.deliver(send) == 2
    assert [e.type for e in send.sent] == ["attempt_started", "attempt_ended"] and box.pending == []


@pytest.mark.asyncio
async def test_a_failure_midway_keeps_only_what_was_not_sent():
    box = Outbox(7)
    box.put([digest(1), end()], attempt=0)
    send = FlakySignal(failures=0)
    box.pending.insert(1, TelemetryNote(text="x", id="7/0/note/1"))

    calls = 0

    async def fail_second(event) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RPCError("deadline exceeded", RPCStatusCode.DEADLINE_EXCEEDED, b"")
        await send(event)

    with pytest.raises(RPCError):
        await box.deliver(fail_second)
    assert [e.type for e in send.sent] == ["progress"] and [e.type for e in box.pending] == ["note", "attempt_ended"]


def test_ids_name_job_attempt_and_kind_and_are_the_same_for_the_same_event():
    assert event_id(7, end(3), attempt=None) == "7/3/attempt_ended/0"
    assert event_id(7, AttemptStarted(attempt=2, nodes=["n1"], at=T0), None) == "7/2/attempt_started/0"
    first, again, other = event_id(7, digest(5), 0), event_id(7, digest(5), 0), event_id(7, digest(6), 0)
    assert first == again != other and first.startswith("7/0/progress/")
    assert event_id(7, TelemetryNote(text="log not read"), attempt=4).startswith("7/4/note/")


def test_an_event_keeps_its_id_when_queued_again():
    box = Outbox(7)
    box.put([end()], attempt=0)
    queued = box.pending[0]
    box.put([queued], attempt=0)
    assert [e.id for e in box.pending] == [queued.id, queued.id]


def test_a_newer_digest_replaces_an_unsent_one_of_the_same_attempt():
    box = Outbox(7)
    box.put([digest(1), end(), digest(2)], attempt=0)
    box.put([digest(3, attempt=1)], attempt=1)
    assert [(e.type, getattr(e, "step", None)) for e in box.pending] == [
        ("attempt_ended", None),
        ("progress", 2),
        ("progress", 3),
    ]


def test_the_outbox_is_bounded_and_gives_up_notes_and_digests_first():
    box = Outbox(7)
    box.put([end(0)], attempt=0)
    box.put([TelemetryNote(text=f"note {i}") for i in range(MAX_PENDING + 5)], attempt=0)
    assert len(box.pending) == MAX_PENDING and box.pending[0].type == "attempt_ended"
    assert box.pending[-1].text == f"note {MAX_PENDING + 4}"


def test_a_digest_coalesced_over_an_undelivered_silent_one_still_says_the_silence_reached_the_budget():
    box = Outbox(7)
    box.put([ProgressDigest(attempt=0, step=5, last_progress_at=T0, observed_at=T0, silent=True, hang_clock=True)], 0)
    later = T0 + timedelta(seconds=9)
    box.put([ProgressDigest(attempt=0, step=5, last_progress_at=T0, observed_at=later, hang_clock=True)], 0)
    [digest] = box.pending
    assert digest.silent
    box.put(
        [
            ProgressDigest(
                attempt=0, step=6, last_progress_at=later, observed_at=later + timedelta(seconds=9), hang_clock=True
            )
        ],
        0,
    )
    [digest] = box.pending
    assert not digest.silent  # progress again, and seen: the silence is over
