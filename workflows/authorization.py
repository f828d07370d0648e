"""Who may answer advice, switch modes, drain or resume: the operators of ``authorization.operators``.

Pure rules over the caller a workflow's inbound interceptor read from the message's header
(:mod:`workflows.callers`). An empty list of operators keeps what the namespace allows (anyone who may
write to it is an operator, as before the list existed); a non-empty one permits only the callers it names.
A message sent without a caller identity (a client without Lazarus's interceptor, e.g. a bare ``curl`` to
Temporal's HTTP API) is then refused too. Update validators raise the refusal; signal handlers record it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lazarus.errors import shorten
from lazarus.models.callers import Caller


def caller_refusal(operators: Sequence[str], caller: Caller | None, action: str) -> str | None:
    """Why ``caller`` may not ``action`` (e.g. "approve advice"); None when it may."""
    if not operators:
        return None
    if caller is None:
        return (
            f"not permitted to {action}: the message carries no caller identity (send it with the lazarus CLI, or "
            "set the lazarus-caller header); only the operators in authorization.operators may"
        )
    if caller.name not in operators:
        return (
            f"{shorten(caller.describe(), 80)} is not permitted to {action}: only the operators in "
            f"authorization.operators may ({shorten(', '.join(operators), 120)})"
        )
    return None


def decided_by(caller: Caller | None, note: str) -> str:
    """Who a decision is recorded as: the caller's identity when known, with the message's free-text
    ``operator`` kept as a note when it says something else; the note alone only when no identity came."""
    if caller is None:
        return note
    if note == caller.name:
        return caller.name
    return f"{caller.name} (note: {shorten(note, 60)})"
