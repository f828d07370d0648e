"""Telemetry activities, served by the process that runs the telemetry loop (they read its live view)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from lazarus.models.recovery import ProgressQuery, ProgressView
from lazarus.telemetry.loop import TelemetryLoop


class TelemetryActivities:
    """Activities bound to one running telemetry loop."""

    def __init__(self, loop: TelemetryLoop) -> None:
        self.loop = loop

    def all(self) -> list[Callable[..., Any]]:
        """Every telemetry activity, for ``Worker(activities=...)``."""
        return [self.job_progress]

    @activity.defn(name="telemetry_job_progress")
    async def job_progress(self, query: ProgressQuery) -> ProgressView:
        """The latest progress the loop saw for one attempt (known=False if it has not read that attempt), and
        whether telemetry can vouch for it now (``blind`` says why not)."""
        return self.loop.progress_view(query)
