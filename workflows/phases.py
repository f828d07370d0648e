"""Recovery states and the transitions allowed between them.

Each edge says what causes it. The workflow calls :func:`check_transition` on
every change, so an illegal move (a bug) fails loudly instead of writing a
confusing history.
"""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from lazarus.models.recovery import RecoveryState as S

ALLOWED_TRANSITIONS: dict[S, frozenset[S]] = {
    S.WATCHING: frozenset(
        {
            S.SUSPECTED,  # an anomaly (crash line, hang, failed end) was recorded
            S.COMPLETED,  # the job finished successfully
            S.STOPPED,  # the job was cancelled or ended with nothing to recover
            S.IGNORED,  # the opt-in comment is invalid
        }
    ),
    S.SUSPECTED: frozenset(
        {
            S.AWAITING_APPROVAL,  # monitor mode published restart advice
            S.ACTING,  # act mode: execute at once
            S.STOPPED,  # the decision is stop (application error, retry limits)
            S.WATCHING,  # nothing to do (benign, or the job already moved on)
            S.COMPLETED,  # the job finished successfully meanwhile
        }
    ),
    S.AWAITING_APPROVAL: frozenset(
        {
            S.ACTING,  # an operator approved
            S.WATCHING,  # rejected, expired (fail-open) or superseded by a new attempt
            S.STOPPED,  # the job ended while waiting and the advice expired
            S.COMPLETED,  # the job finished successfully while waiting
        }
    ),
    S.ACTING: frozenset(
        {
            S.VERIFYING,  # requeue verified; waiting for the next attempt to start
            S.FAILED,  # the scheduler refused the action permanently
            S.STOPPED,  # a stop advice was executed
            S.WATCHING,  # the action turned out unnecessary (job already moved on)
        }
    ),
    S.VERIFYING: frozenset(
        {
            S.WATCHING,  # the next attempt started
            S.SUSPECTED,  # the pending attempt failed again before starting
            S.STOPPED,  # the job was cancelled while pending
            S.COMPLETED,  # finished (very short attempt)
        }
    ),
    S.COMPLETED: frozenset(),
    S.STOPPED: frozenset(),
    S.FAILED: frozenset(),
    S.IGNORED: frozenset(),
}


class IllegalTransition(ApplicationError):
    """A state change the table does not allow: a bug. It fails the workflow visibly (non-retryable)
    rather than leaving its task retrying for ever."""

    def __init__(self, message: str) -> None:
        super().__init__(message, type="IllegalTransition", non_retryable=True)


def check_transition(current: S, new: S) -> None:
    if new == current:
        return
    if new not in ALLOWED_TRANSITIONS[current]:
        raise IllegalTransition(f"recovery state cannot go from {current.value} to {new.value}")
