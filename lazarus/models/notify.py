"""Notices: what Lazarus tells operators through webhooks when it needs them or did something they must know.

The workflows build a :class:`Notice` (pure, from their state) and hand it to the
``notify`` activity, which posts it to every configured webhook (``notifications``
in the configuration) with a link to the job's history in the Temporal UI.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class NoticeKind(StrEnum):
    """What happened. Values are part of the webhook payload (``kind``) and of ``notifications.webhooks[].events``."""

    ADVICE_PENDING = "advice-pending"  # monitor mode: advice awaits an operator's approval
    JOB_STOPPED = "job-stopped"  # Lazarus will not restart the job (stop advice, attempts used up, rejected, expired)
    JOB_FAILED = "job-failed"  # Lazarus could not act (the scheduler refused the restart)
    NODE_DRAINED = "node-drained"  # the node ledger drained a node
    DRAIN_REFUSED = "drain-refused"  # the node ledger did not drain a node: the drain budget is used up
    SPARES_SHORT = "spares-short"  # a spare pool lost a member and no healthy idle node is free to replace it


class Notice(BaseModel):
    """One message for the webhooks. ``id`` is the same for every delivery of the same event (retries
    included), so a receiver can drop duplicates."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="stable per event: <workflow id>/<kind>/<sequence>")
    kind: NoticeKind
    cluster: str
    text: str = Field(min_length=1, description="one line for people")
    at: datetime = Field(description="when it happened (workflow time)")
    workflow_id: str = Field(description="the workflow whose history the message links to")
    job_id: int | None = None
    node: str | None = None
    generation: int | None = Field(None, description="the advice concerned (advice-pending)")
    action: str | None = Field(None, description="the advice's action: restart, stop, none")
    nodes: list[str] = Field(default_factory=list, description="nodes the advice excludes or drains")
    reason: str | None = None


class NotifyResult(BaseModel):
    """What the activity delivered: the webhooks (by position in the configuration) that took the message."""

    model_config = ConfigDict(extra="forbid")

    delivered: list[int] = Field(default_factory=list)
    skipped: list[int] = Field(default_factory=list, description="webhooks not subscribed to this kind")
