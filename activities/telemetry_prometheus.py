"""Prometheus-backed telemetry activities: straggler detection and node health, one query each per call.

``prometheus_find_stragglers`` runs one throughput query for all requested jobs
and the pure detector; ``prometheus_node_health`` reads the node agents'
verdicts for the nodes an attempt ran on (for attribution).

Errors reach the workflow as ``ApplicationError`` types it can name in a retry
policy: ``PrometheusUnavailable`` (retryable: the server may come back),
``PrometheusQuery`` and ``InvalidArgument`` (non-retryable: the same request
would fail again).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from pydantic import ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from lazarus.config import PrometheusSettings
from lazarus.health.fleet import NodeHealthRequest, NodeHealthResult, fetch_node_health
from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import FindStragglersRequest, FindStragglersResult
from lazarus.straggler.prometheus import (
    PrometheusError,
    PrometheusThroughput,
    PrometheusUnavailableError,
    ThroughputQuery,
)


class PrometheusActivities:
    """Holds one Prometheus client per worker; register ``find_stragglers`` on the telemetry worker."""

    def __init__(self, source: PrometheusThroughput, metric: str) -> None:
        self.source = source
        self.metric = metric

    @classmethod
    def from_settings(cls, settings: PrometheusSettings) -> "PrometheusActivities":
        return cls(PrometheusThroughput(settings.url, settings.timeout_s), settings.throughput_metric)

    @activity.defn(name="prometheus_find_stragglers")
    async def find_stragglers(self, request: FindStragglersRequest) -> FindStragglersResult:
        """Current stragglers of the requested jobs (an empty result when none publish throughput)."""
        try:
            query = ThroughputQuery(
                job_ids=request.job_ids,
                metric=request.metric or self.metric,
                level=request.level,
                window=timedelta(seconds=request.window_s),
                lookback=timedelta(seconds=request.lookback_s),
            )
        except ValidationError as exc:
            raise ApplicationError(f"invalid straggler request: {exc}", type="InvalidArgument", non_retryable=True)
        try:
            series = await self.source.fetch_async(query)
        except PrometheusError as exc:
            raise _application_error(exc) from None
        findings = find_stragglers(series, request.thresholds, query.metric)
        for f in findings:
            activity.logger.info(
                "straggler: job %s %s dropped %.0f%% for %d windows", f.job_id, f.where(), f.drop_fraction * 100,
                f.windows,
            )  # fmt: skip
        return FindStragglersResult(findings=findings, series=len(series))

    @activity.defn(name="prometheus_node_health")
    async def node_health(self, request: NodeHealthRequest) -> NodeHealthResult:
        """Latest node-agent verdicts of the requested nodes; nodes without agent data are listed as missing."""
        try:
            return await asyncio.to_thread(fetch_node_health, self.source, request)
        except PrometheusError as exc:
            raise _application_error(exc) from None


def _application_error(exc: PrometheusError) -> ApplicationError:
    """Unreachable is worth retrying; a rejected or garbled answer is not."""
    if isinstance(exc, PrometheusUnavailableError):
        return ApplicationError(str(exc), type="PrometheusUnavailable")
    return ApplicationError(str(exc), type="PrometheusQuery", non_retryable=True)
