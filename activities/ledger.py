"""The node ledger's cluster-wide mode (the kill switch), read by the scheduler worker right before acting.

A job workflow decided in act mode asks here, at the moment of acting, whether
an operator has since thrown the kill switch (``lazarus mode monitor``). The
worker that would act answers, so a worker able to act is also able to say
whether it may. The answer is the ledger's own state, read from the memo it
publishes (served by the server, so a busy control worker cannot delay it) or,
for a ledger started before it published one, with a query
(:mod:`lazarus.ledger_mode`); an
error (ledger gone, no worker to answer, a timeout) is raised, and the workflow
then acts as monitor: in doubt, advice waits for a person.

Hundreds of decisions at once (a correlated failure, 10,000 watched jobs) would
be hundreds of queries, each a workflow task on the ledger. One read therefore
serves every decision made within :data:`MODE_FRESH_FOR` of it (reads asked for
while one is under way wait for that one): a thrown switch holds back every
action that starts later than that. A read older than that is never given
again, and a read that failed is never remembered.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from lazarus.ledger_mode import read_cluster_mode
from lazarus.models.ledger import ClusterMode

# One query; the workflow's preset (LEDGER_READ) bounds the whole activity, retries included.
QUERY_TIMEOUT = timedelta(seconds=5)
# A read of the mode serves the decisions made this long after it was asked for.
MODE_FRESH_FOR = timedelta(seconds=2)


class LedgerActivities:
    """Activities bound to one Temporal client (``clock``: monotonic seconds, for tests)."""

    def __init__(self, client: Client, clock: Callable[[], float] = time.monotonic) -> None:
        self.client, self._clock = client, clock
        self._read: dict[str, tuple[float, asyncio.Future[ClusterMode]]] = {}  # ledger -> (asked at, read)

    def all(self) -> list[Callable[..., Any]]:
        """Every ledger activity, for ``Worker(activities=...)``."""
        return [self.cluster_mode]

    @activity.defn(name="ledger_cluster_mode")
    async def cluster_mode(self, ledger_workflow_id: str) -> ClusterMode:
        """The mode an operator set for the whole cluster (None when none is set); raises when unreadable."""
        asked_at, read = self._read.get(ledger_workflow_id, (None, None))
        stale = asked_at is None or self._clock() - asked_at > MODE_FRESH_FOR.total_seconds()
        if read is None or stale or (read.done() and read.exception() is not None):
            read = asyncio.ensure_future(read_cluster_mode(self.client, ledger_workflow_id, QUERY_TIMEOUT))
            self._read[ledger_workflow_id] = (self._clock(), read)
        try:
            return await asyncio.shield(read)
        except Exception as exc:
            raise ApplicationError(
                f"cannot read the cluster-wide mode from {ledger_workflow_id}: {exc}", type="ClusterModeUnreadable"
            ) from exc
