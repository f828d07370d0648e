"""Per-node (or per-rank) throughput windows from Prometheus, one range query per cycle for all jobs.

Training jobs (or an exporter beside them) publish a gauge, by default
``lazarus_rank_samples_per_second{job_id, node, rank}``; docs/stragglers.md
lists the labels. Each cycle sends one ``query_range`` whose step equals the
window, so each returned point is already one window's mean::

    sum by (job_id, node) (avg_over_time(lazarus_rank_samples_per_second{job_id=~"1|2"}[60s]))

prometheus-api-client is synchronous (requests): callers inside an event loop
use :meth:`PrometheusThroughput.fetch_async`, which runs it in a thread. The
client gets an explicit timeout and no retries (its default retries a dead
server for 6 s); the caller's schedule is the retry. Certificates of an https
server are always verified (against the :class:`~lazarus.http_auth.HttpAuth`'s
CA bundle, else the system CAs) and its credentials go in the headers.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import requests
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from pydantic import BaseModel, ConfigDict, Field, field_validator
from urllib3.util.retry import Retry

from lazarus.errors import LazarusError
from lazarus.http_auth import HttpAuth
from lazarus.straggler.models import DEFAULT_METRIC, ThroughputSeries, WindowPoint

_JOB_ID = re.compile(r"^[A-Za-z0-9_.:-]+$")
_METRIC = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


class PrometheusError(LazarusError):
    """Prometheus could not answer a throughput query."""


class PrometheusUnavailableError(PrometheusError):
    """Prometheus is unreachable or too slow (a retry later may succeed)."""


class PrometheusQueryError(PrometheusError):
    """Prometheus rejected the query or answered something unusable (retrying will not help)."""


class ThroughputQuery(BaseModel):
    """What to ask Prometheus for."""

    model_config = ConfigDict(extra="forbid")

    job_ids: list[str] | None = Field(None, description="None: every job that publishes the metric")
    metric: str = DEFAULT_METRIC
    level: Literal["node", "rank"] = "node"
    window: timedelta = Field(timedelta(seconds=60), description="one detector window = one query step")
    lookback: timedelta = Field(timedelta(minutes=30), description="history the baseline is drawn from")

    @field_validator("job_ids")
    @classmethod
    def _safe_job_ids(cls, v: list[str] | None) -> list[str] | None:
        bad = [j for j in v or [] if not _JOB_ID.match(j)]
        if bad:
            raise ValueError(f"job ids may hold only letters, digits and _.:- ; got {bad[:3]}")
        return v

    @field_validator("metric")
    @classmethod
    def _metric_name(cls, v: str) -> str:
        if not _METRIC.match(v):
            raise ValueError(f"not a Prometheus metric name: {v!r}")
        return v

    @field_validator("window")
    @classmethod
    def _whole_seconds(cls, v: timedelta) -> timedelta:
        if v.total_seconds() < 1 or v.total_seconds() != int(v.total_seconds()):
            raise ValueError("window must be a whole number of seconds, at least 1")
        return v

    def promql(self) -> str:
        labels = "job_id, node" if self.level == "node" else "job_id, node, rank"
        selector = f'{self.metric}{{job_id=~"{"|".join(self.job_ids)}"}}' if self.job_ids else self.metric
        return f"sum by ({labels}) (avg_over_time({selector}[{int(self.window.total_seconds())}s]))"


class PrometheusApi:
    """prometheus-api-client with a timeout, no retries, and errors translated to :class:`PrometheusError`."""

    def __init__(self, url: str, timeout_s: float = 5.0, auth: HttpAuth | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.auth = auth or HttpAuth()
        session = requests.Session()
        session.verify = self.auth.verify
        self._client = PrometheusConnect(
            url=self.url,
            headers=self.auth.header_values() or None,
            session=session,
            retry=Retry(total=0),
            timeout=timeout_s,
        )

    def range(self, what: str, expr: str, start: datetime, end: datetime, step_s: int) -> list[dict[str, Any]]:
        """``query_range`` result items (``metric``, ``values``); ``what`` names the query in errors."""
        items: list[dict[str, Any]] = self._call(
            what, self._client.custom_query_range, expr, start_time=start, end_time=end, step=f"{step_s}s"
        )
        return items

    def instant(self, what: str, expr: str) -> list[dict[str, Any]]:
        """Instant ``query`` result items (``metric``, ``value``)."""
        items: list[dict[str, Any]] = self._call(what, self._client.custom_query, expr)
        return items

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except requests.exceptions.SSLError:
            against = f"the CA bundle {self.auth.ca_file}" if self.auth.ca_file else "the system CAs"
            raise PrometheusUnavailableError(
                f"Prometheus at {self.url}: its TLS certificate does not verify against {against}; "
                "set prometheus.ca_file to the CA that signed it"
            ) from None
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise PrometheusUnavailableError(
                f"Prometheus at {self.url} is unreachable ({type(exc).__name__}); check the URL and that it is up"
            ) from None
        except PrometheusApiClientException as exc:
            if str(exc).startswith(("HTTP Status Code 401", "HTTP Status Code 403")):
                raise PrometheusQueryError(
                    f"Prometheus at {self.url} refused the credentials ({str(exc)[17:20]}); check "
                    "prometheus.bearer_token_file, prometheus.basic_auth_file or LAZARUS_PROMETHEUS__BEARER_TOKEN"
                ) from None
            raise PrometheusQueryError(f"Prometheus at {self.url} rejected the {what}: {exc}") from None
        except (requests.RequestException, ValueError) as exc:
            raise PrometheusQueryError(
                f"Prometheus at {self.url} gave an unusable answer to the {what}: {exc}"
            ) from None

    def close(self) -> None:
        self._client.close()


class PrometheusThroughput(PrometheusApi):
    """Reads throughput windows from one Prometheus server."""

    def fetch(self, query: ThroughputQuery, end: datetime | None = None) -> list[ThroughputSeries]:
        """Every matching series over ``[end - lookback, end]``, one point per window."""
        if query.job_ids == []:
            return []
        end = end or datetime.now(UTC)
        step = int(query.window.total_seconds())
        result = self.range("throughput query", query.promql(), end - query.lookback, end, step)
        return [_series(item, query.level) for item in result]

    async def fetch_async(self, query: ThroughputQuery, end: datetime | None = None) -> list[ThroughputSeries]:
        """:meth:`fetch` off the event loop."""
        return await asyncio.to_thread(self.fetch, query, end)


def _series(item: dict[str, Any], level: str) -> ThroughputSeries:
    labels = item.get("metric", {})
    windows = [
        WindowPoint(end=datetime.fromtimestamp(float(ts), UTC), value=float(v))
        for ts, v in item.get("values", [])
        if math.isfinite(float(v)) and float(v) >= 0  # NaN/Inf from an idle exporter are gaps, not data
    ]
    return ThroughputSeries(
        job_id=labels.get("job_id", ""),
        node=labels.get("node", ""),
        rank=labels.get("rank") if level == "rank" else None,
        windows=windows,
    )
