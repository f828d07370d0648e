"""The node ledger's cluster-wide mode (the kill switch), read by the scheduler worker right before acting.

A job workflow decided in act mode asks here, at the moment of acting, whether
an operator has since thrown the kill switch (``lazarus mode monitor``). The
worker that would act answers, so a worker able to act is also able to say
whether it may. The answer is the ledger's own state, read with a query; an
error (ledger gone, no worker to answer, a timeout) is raised, and the workflow
then acts as monitor: in doubt, advice waits for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from lazarus.models import names
from lazarus.models.ledger import ClusterMode, LedgerView
from lazarus.models.policy import Mode

# One query; the workflow's preset (LEDGER_READ) bounds the whole activity, retries included.
QUERY_TIMEOUT = timedelta(seconds=5)


class LedgerActivities:
    """Activities bound to one Temporal client."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def all(self) -> list[Callable[..., Any]]:
        """Every ledger activity, for ``Worker(activities=...)``."""
        return [self.cluster_mode]

    @activity.defn(name="ledger_cluster_mode")
    async def cluster_mode(self, ledger_workflow_id: str) -> ClusterMode:
        """The mode an operator set for the whole cluster (None when none is set); raises when unreadable."""
        try:
            view = await self.client.get_workflow_handle(ledger_workflow_id).query(
                names.LEDGER_VIEW, result_type=LedgerView, rpc_timeout=QUERY_TIMEOUT
            )
        except Exception as exc:
            raise ApplicationError(
                f"cannot read the cluster-wide mode from {ledger_workflow_id}: {exc}", type="ClusterModeUnreadable"
            ) from exc
        return ClusterMode(mode=Mode(view.mode_override) if view.mode_override else None, set_by=view.mode_set_by)
