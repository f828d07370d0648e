"""The ``notify`` activity's double for the workflow tests and the recorded scenarios: it records each notice
and answers at once. Revisions from before notices have no notice model; ``scripts/record_histories.py --rev``
runs the scenarios against such a revision's code, where the double is simply left out."""

from __future__ import annotations

from typing import Any

from temporalio import activity

try:
    from lazarus.models.notify import Notice, NotifyResult
except ModuleNotFoundError:  # a revision from before notices (record_histories.py --rev)
    NOTICES = False
else:
    NOTICES = True


def notify_activities(sink: list[Any]) -> list[Any]:
    """The notify double appending each notice to ``sink`` (none where the revision has no notices)."""
    if not NOTICES:
        return []

    @activity.defn(name="notify")
    async def notify(notice: Notice) -> NotifyResult:
        sink.append(notice)
        return NotifyResult(delivered=[0])

    return [notify]
