"""The notify activity: post a notice to the configured webhooks (served by the scheduler role).

A webhook that fails makes the activity fail, so Temporal retries it (preset
``NOTIFY`` in :mod:`workflows.options`); the webhooks that already took the notice
are remembered in the activity's heartbeat and skipped on the retry, so a
working webhook is not posted to again because another one is down. A receiver
can also drop duplicates by the notice's ``id``. A configuration problem (a
missing URL file) fails at once, without retries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from lazarus.config import Settings
from lazarus.errors import ConfigError
from lazarus.models.notify import Notice, NotifyResult
from lazarus.notify import deliver


class NotifyActivities:
    """Activities bound to the worker's settings (webhooks, the Temporal UI's URL for links)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def all(self) -> list[Callable[..., Any]]:
        """Every notification activity, for ``Worker(activities=...)``."""
        return [self.notify]

    @activity.defn(name="notify")
    async def notify(self, notice: Notice) -> NotifyResult:
        """Post ``notice`` to every webhook subscribed to its kind; fail (to be retried) if one did not take it."""
        details = activity.info().heartbeat_details
        done: list[int] = list(details[0]) if details else []
        try:
            delivered, skipped, failures = await deliver(self.settings, notice, set(done))
        except ConfigError as exc:
            raise ApplicationError(str(exc), type="BadWebhook", non_retryable=True) from None
        done += delivered
        activity.heartbeat(done)
        if failures:
            raise ApplicationError("; ".join(failures), type="WebhookFailed")
        return NotifyResult(delivered=sorted(done), skipped=skipped)
