"""The node-health activity, served by the telemetry worker: the node agents' verdict, which the node ledger asks
for before it drains a node (corroboration from outside the job, see :mod:`lazarus.health.verdicts`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio import activity

from lazarus.config import Settings
from lazarus.health.verdicts import node_verdicts
from lazarus.http_auth import http_auth
from lazarus.models.ledger import NodeHealthQuery, NodeHealthReport
from lazarus.straggler.prometheus import PrometheusApi


class HealthActivities:
    """Activities reading node health where the settings say: Prometheus, or the node agents themselves."""

    def __init__(self, settings: Settings) -> None:
        prom = settings.prometheus
        self.prometheus = (
            PrometheusApi(prom.url, prom.timeout_s, http_auth(prom, "Prometheus")) if prom.enabled else None
        )
        self.agents = settings.node_agents

    def all(self) -> list[Callable[..., Any]]:
        """Every health activity, for ``Worker(activities=...)``."""
        return [self.node_health]

    @activity.defn(name="node_health")
    async def node_health(self, query: NodeHealthQuery) -> NodeHealthReport:
        """The current verdict of each asked node that has one; ``unavailable`` says what could not be read."""
        return await asyncio.to_thread(node_verdicts, query, self.prometheus, self.agents)
