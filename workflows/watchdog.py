"""The job workflow's one watchdog timer (hang or attempt start), as a durable Temporal timer.

A timer is not cancelled and restarted for every progress digest (that would
cost two history events per digest): it keeps running while the wanted
deadline is later than its own, and when it fires early the deadline is simply
re-evaluated and a new timer set. A timer is replaced only when the deadline
moves earlier, or, with ``replace_later``, when it moves later: the hang backstop, which
rare digests move on by many minutes, is replaced in the digest's own workflow task rather
than left to fire early and cost a task of its own. Workflow code only: it reads workflow
time and starts timers.

Decisions never compare with ``workflow.now()`` at the moment a timer fires: on a workflow task that was
retried after a worker died (a transient task), the time a live worker sees can differ from the time a
replay sees, so "has the deadline passed?" is answered against the deadline the fired timer was set for.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from temporalio import workflow


class Watchdog:
    def __init__(self) -> None:
        self._timer: asyncio.Future[None] | None = None
        self._deadline: datetime | None = None  # when the running timer fires
        self._armed_for: datetime | None = None  # the deadline it was set for (earlier when that had passed)

    @property
    def fired(self) -> bool:
        return self._timer is not None and self._timer.done()

    def arm(self, deadline: datetime | None, summary: str | None, replace_later: bool = False) -> None:
        """Keep, replace or cancel the timer so that it fires no later than ``deadline`` (None: cancel); with
        ``replace_later``, at ``deadline`` exactly (a timer for an earlier deadline is replaced too)."""
        if self._timer is not None and not self._timer.done():
            if replace_later and deadline is not None and self._armed_for == deadline:
                return  # already set for it
            if not replace_later and deadline is not None and self._deadline is not None and self._deadline <= deadline:
                return  # fires first; the deadline is re-checked then
            self._timer.cancel()
        self._timer, self._deadline, self._armed_for = None, None, None
        if deadline is None:
            return
        delay = max(deadline - workflow.now(), timedelta(seconds=1))
        self._timer = asyncio.ensure_future(workflow.sleep(delay, summary=summary))
        self._deadline, self._armed_for = workflow.now() + delay, deadline

    def take(self) -> datetime | None:
        """Forget a timer that fired (the caller handles it); returns the deadline it was set for."""
        fired_for, self._timer, self._deadline, self._armed_for = self._armed_for, None, None, None
        return fired_for
