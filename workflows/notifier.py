"""Sending notices from a workflow: in the background, never holding up a recovery. Workflow code only.

A notice is one ``notify`` activity (:func:`workflows.calls.notify`) started as a
task; the workflow waits for its notices only before it completes or continues
as new, so none is cut off. Runs whose history began before notices existed keep
sending none (patch ``notifies-operators``), so their histories still replay.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows import calls
    from workflows.effects import Notify

NOTIFIES = "notifies-operators"
"""Patch id: the first notice of a run decides, for the whole run, whether it sends notices."""


class Notifier:
    def __init__(self) -> None:
        self._pending: list[asyncio.Task[None]] = []

    def send(self, effect: Notify) -> None:
        """Start posting ``effect``'s notice unless this run predates notices."""
        if workflow.patched(NOTIFIES):
            self._pending.append(asyncio.create_task(calls.notify(effect)))

    async def flush(self) -> None:
        """Wait until every notice started has been delivered or given up."""
        await workflow.wait_condition(lambda: all(task.done() for task in self._pending))
        self._pending.clear()
