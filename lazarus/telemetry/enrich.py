"""Attribution beyond the log lines: node health from the node agents, and an optional external provider.

Both are best effort. When Prometheus or the provider is off, slow or wrong,
the built-in log attribution stands and the diagnosis says so in ``notes``, so
the operator reading the record knows which sources were used.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from datetime import timedelta

from loguru import logger
from pydantic import BaseModel, ConfigDict, ValidationError

from lazarus.config import Settings
from lazarus.health.fleet import NodeHealthRequest, fetch_node_health
from lazarus.http_auth import HttpAuth, http_auth
from lazarus.models.diagnosis import Category, Diagnosis, EvidenceSource, RetryAdvice
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerFinding, StragglerThresholds
from lazarus.straggler.prometheus import PrometheusError, PrometheusThroughput, ThroughputQuery
from lazarus.straggler.trust import describe_ignored, trusted_series


class ProviderVerdict(BaseModel):
    """What an external provider may change; anything it leaves out keeps the built-in value."""

    model_config = ConfigDict(extra="ignore")

    category: Category | None = None
    implicated_nodes: list[str] | None = None
    retry_advice: RetryAdvice | None = None
    confidence: float | None = None
    explanation: str | None = None


class Enricher:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        prom = settings.prometheus
        self.prom = (
            PrometheusThroughput(prom.url, prom.timeout_s, http_auth(prom, "Prometheus")) if prom.enabled else None
        )
        self.provider_auth = http_auth(settings.attribution, "the attribution provider")

    async def stragglers(self, jobs: Mapping[int, JobSnapshot]) -> list[StragglerFinding]:
        """Straggler findings for the ``jobs`` Slurm shows running (the cycle's snapshot), from series whose
        ``job_id`` and ``node`` labels agree with Slurm: a job's metrics count only inside its allocation."""
        allocations = {
            str(job_id): frozenset(job.nodes)
            for job_id, job in jobs.items()
            if job.state == JobState.RUNNING and job.nodes
        }
        if self.prom is None or not allocations:
            return []
        prom = self.settings.prometheus
        query = ThroughputQuery(
            job_ids=sorted(allocations),
            metric=prom.throughput_metric,
            window=prom.straggler_window,
            lookback=max(prom.straggler_window * 30, timedelta(minutes=5)),
        )
        try:
            series = await self.prom.fetch_async(query)
        except PrometheusError as exc:
            logger.warning(f"straggler check skipped: {exc}")
            return []
        series, ignored = trusted_series(series, allocations)
        if ignored:
            logger.warning(
                f"straggler check ignored {len(ignored)} series labelled outside the job's allocation "
                f"in Slurm: {describe_ignored(ignored)}"
            )
        thresholds = StragglerThresholds(drop_fraction=prom.straggler_drop_fraction, min_windows=prom.straggler_windows)
        return find_stragglers(series, thresholds, metric=prom.throughput_metric)

    async def attribute(self, diagnosis: Diagnosis, job_id: int, attempt: int, nodes: list[str]) -> Diagnosis:
        diagnosis = await self._node_health(diagnosis, nodes)
        return await self._provider(diagnosis, job_id, attempt, nodes)

    async def _node_health(self, diagnosis: Diagnosis, nodes: list[str]) -> Diagnosis:
        """A node the agents report failed names the culprit when the logs could not."""
        if self.prom is None or not nodes or diagnosis.implicated_nodes:
            return diagnosis
        try:
            health = await asyncio.to_thread(fetch_node_health, self.prom, NodeHealthRequest(nodes=nodes))
        except PrometheusError as exc:
            return diagnosis.model_copy(update={"notes": [*diagnosis.notes, f"node health unavailable: {exc}"]})
        failed = sorted(n.node for n in health.nodes if n.verdict.value == "failed")
        if not failed:
            return diagnosis
        return diagnosis.model_copy(
            update={
                "implicated_nodes": failed,
                "implicated_by": EvidenceSource.NODE_AGENT,
                "category": Category.HARDWARE,
                "retry_advice": RetryAdvice.RETRY_EXCLUDING_NODES
                if diagnosis.retry_advice != RetryAdvice.STOP
                else diagnosis.retry_advice,
                "confidence": max(diagnosis.confidence, 0.8),
                "notes": [*diagnosis.notes, f"node agents report {', '.join(failed)} failed"],
            }
        )

    async def _provider(self, diagnosis: Diagnosis, job_id: int, attempt: int, nodes: list[str]) -> Diagnosis:
        cfg = self.settings.attribution
        if not cfg.provider_url:
            return diagnosis
        body = json.dumps(
            {"job_id": job_id, "attempt": attempt, "nodes": nodes, "diagnosis": diagnosis.model_dump(mode="json")}
        ).encode()
        try:
            raw = await asyncio.to_thread(_post, cfg.provider_url, body, cfg.timeout_s, self.provider_auth)
            verdict = ProviderVerdict.model_validate_json(raw)
        except (OSError, urllib.error.URLError, TimeoutError, ValidationError, ValueError) as exc:
            note = f"external attribution provider failed ({type(exc).__name__}: {str(exc)[:120]}); built-in rules used"
            return diagnosis.model_copy(update={"notes": [*diagnosis.notes, note]})
        update = {k: v for k, v in verdict.model_dump().items() if v is not None}
        if "implicated_nodes" in update:
            update["implicated_nodes"] = [n for n in update["implicated_nodes"] if n in nodes]
            if update["implicated_nodes"] != diagnosis.implicated_nodes:  # the provider's word is not outside evidence
                update["implicated_by"] = EvidenceSource.JOB_OUTPUT
        update["notes"] = [*diagnosis.notes, f"attribution by external provider {cfg.provider_url}"]
        return diagnosis.model_copy(update=update)


def _post(url: str, body: bytes, timeout: float, auth: HttpAuth) -> bytes:
    """POST ``body``; an https provider's certificate is verified, its credentials sent (never logged)."""
    headers = {"Content-Type": "application/json", **auth.header_values()}
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    context = auth.ssl_context() if url.startswith("https:") else None
    with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
        data: bytes = resp.read(1 << 20)
        return data
