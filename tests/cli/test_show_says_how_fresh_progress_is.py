"""`lazarus show` says how fresh each attempt's progress view is: as of telemetry's last report on the
attempt (its heartbeat, or the attempt's end), and when the last progress line was seen if that was earlier."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.cli.timeline import render_timeline
from lazarus.models.policy import Mode
from lazarus.models.recovery import Attempt, JobStatus, RecoveryState

T0 = datetime(2026, 11, 29, 9, 32, 10, tzinfo=UTC)


def shown(**attempt: object) -> str:
    status = JobStatus(
        cluster="c",
        job_id=7,
        state=RecoveryState.WATCHING,
        mode=Mode.ACT,
        policy_name="default",
        attempts=[Attempt(index=0, nodes=["node1"], started_at=T0 - timedelta(minutes=5), **attempt)],
        advice=None,
        advice_history=[],
    )
    [line] = [line for line in render_timeline(status, "link").splitlines() if "progress:" in line]
    return line


def test_progress_reported_with_its_line_is_as_of_that_line():
    assert shown(last_step=40, last_checkpoint=40, last_progress_at=T0, observed_at=T0) == (
        "    progress: step 40, checkpoint 40 (as of 09:32:10)"
    )


def test_a_later_report_without_new_progress_says_both_times():
    later = T0 + timedelta(seconds=30)
    assert shown(last_step=12, last_checkpoint=10, last_progress_at=T0, observed_at=later) == (
        "    progress: step 12, checkpoint 10 (as of 09:32:40; last progress line at 09:32:10)"
    )


def test_an_attempt_seen_without_any_progress_line_says_as_of_when():
    assert shown(observed_at=T0) == "    progress: step -, checkpoint - (as of 09:32:10)"


def test_an_attempt_never_reported_says_no_time():
    assert shown() == "    progress: step -, checkpoint -"
