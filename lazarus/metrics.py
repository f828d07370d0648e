"""Lazarus's own metrics in a worker process, and the two endpoints every worker serves.

The catalogue (:mod:`lazarus.models.metrics`) declares every metric; this module builds the
worker-side ones with prometheus_client and records them:

- :func:`scheduler_command` times every Slurm command (the adapter's one command runner) and
  counts its typed errors;
- :data:`TELEMETRY` times the telemetry loop's cycles; its lag is read at scrape time;
- :class:`ClusterView`, run by the telemetry role, looks at the whole cluster every few seconds for
  the gauges no single event carries: advice waiting for an operator (Temporal's visibility and the
  job's ``status`` query), the node ledger's size, the drain budget left (Slurm's node list), the
  watched jobs and how often each restarted within the hour.

:func:`serve` starts ``metrics.port`` (the metrics of the roles this process serves, and the
process's own CPU and memory); :func:`temporal_runtime` starts ``metrics.temporal_port``: the
Temporal SDK's Prometheus exporter, which serves the SDK's metrics and those the workflows record
with their replay-safe meter (:mod:`workflows.metering`).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar
from wsgiref.simple_server import WSGIServer

from loguru import logger
from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector
from temporalio.client import Client, WorkflowQueryFailedError
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.service import RPCError

from lazarus import __version__
from lazarus.config import MetricsSettings, Settings
from lazarus.errors import LazarusError
from lazarus.models import metrics as catalogue
from lazarus.models import names
from lazarus.models.ledger import LedgerView
from lazarus.models.metrics import MetricSpec
from lazarus.models.recovery import AdviceStatus, JobStatus, RecoveryState
from lazarus.models.slurm import NodeState

T = TypeVar("T")


class MetricsError(LazarusError):
    """A metrics endpoint could not be served (a port in use, an address this host does not have)."""


def _counter(spec: MetricSpec) -> Counter:
    return Counter(spec.name, spec.help, spec.labels, registry=None)


def _gauge(spec: MetricSpec) -> Gauge:
    return Gauge(spec.name, spec.help, spec.labels, registry=None)


def _histogram(spec: MetricSpec) -> Histogram:
    return Histogram(spec.name, spec.help, spec.labels, buckets=spec.buckets, registry=None)


WORKER_INFO = _gauge(catalogue.WORKER_INFO)
SCHEDULER_COMMAND_DURATION = _histogram(catalogue.SCHEDULER_COMMAND_DURATION)
SCHEDULER_COMMAND_ERRORS = _counter(catalogue.SCHEDULER_COMMAND_ERRORS)
TELEMETRY_CYCLES = _counter(catalogue.TELEMETRY_CYCLES)
TELEMETRY_CYCLE_DURATION = _histogram(catalogue.TELEMETRY_CYCLE_DURATION)
TELEMETRY_LAG = _gauge(catalogue.TELEMETRY_LAG)
WATCHED_JOBS = _gauge(catalogue.WATCHED_JOBS)
JOB_RESTARTS_MAX = _gauge(catalogue.JOB_RESTARTS_MAX)
ADVICE_PENDING = _gauge(catalogue.ADVICE_PENDING)
ADVICE_PENDING_AGE = _gauge(catalogue.ADVICE_PENDING_AGE)
LEDGER_NODES = _gauge(catalogue.LEDGER_NODES)
LEDGER_IMPLICATIONS = _gauge(catalogue.LEDGER_IMPLICATIONS)
NODES_DRAINED = _gauge(catalogue.NODES_DRAINED)
DRAIN_BUDGET_REMAINING = _gauge(catalogue.DRAIN_BUDGET_REMAINING)
SPARES_FREE = _gauge(catalogue.SPARES_FREE)
SPARES_USED = _gauge(catalogue.SPARES_USED)
SPARES_SHORT = _gauge(catalogue.SPARES_SHORT)
CLUSTER_VIEW_ERRORS = _counter(catalogue.CLUSTER_VIEW_ERRORS)

WORKER_METRICS: dict[str, MetricWrapperBase] = {
    spec.name: metric
    for spec, metric in [
        (catalogue.WORKER_INFO, WORKER_INFO),
        (catalogue.SCHEDULER_COMMAND_DURATION, SCHEDULER_COMMAND_DURATION),
        (catalogue.SCHEDULER_COMMAND_ERRORS, SCHEDULER_COMMAND_ERRORS),
        (catalogue.TELEMETRY_CYCLES, TELEMETRY_CYCLES),
        (catalogue.TELEMETRY_CYCLE_DURATION, TELEMETRY_CYCLE_DURATION),
        (catalogue.TELEMETRY_LAG, TELEMETRY_LAG),
        (catalogue.WATCHED_JOBS, WATCHED_JOBS),
        (catalogue.JOB_RESTARTS_MAX, JOB_RESTARTS_MAX),
        (catalogue.ADVICE_PENDING, ADVICE_PENDING),
        (catalogue.ADVICE_PENDING_AGE, ADVICE_PENDING_AGE),
        (catalogue.LEDGER_NODES, LEDGER_NODES),
        (catalogue.LEDGER_IMPLICATIONS, LEDGER_IMPLICATIONS),
        (catalogue.NODES_DRAINED, NODES_DRAINED),
        (catalogue.DRAIN_BUDGET_REMAINING, DRAIN_BUDGET_REMAINING),
        (catalogue.SPARES_FREE, SPARES_FREE),
        (catalogue.SPARES_USED, SPARES_USED),
        (catalogue.SPARES_SHORT, SPARES_SHORT),
        (catalogue.CLUSTER_VIEW_ERRORS, CLUSTER_VIEW_ERRORS),
    ]
}
"""Every worker-side metric of the catalogue, by name (a test holds the two equal)."""

REGISTRY = CollectorRegistry(auto_describe=True)
"""What ``metrics.port`` serves: the process's own metrics, then each served role's (see :func:`serve`)."""
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)
_registered: set[str] = set()


# ---- Slurm commands ----------------------------------------------------------------------------------------

_WORD = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def command_label(argv: Sequence[str]) -> str:
    """The ``command`` label of a Slurm command line: the program, with scontrol's subcommand (bounded: the
    adapter builds every argv from its own constants)."""
    program = os.path.basename(argv[0]) if argv else ""
    if not _WORD.match(program):
        return "other"
    if program == "scontrol" and len(argv) > 1 and _WORD.match(argv[1]):
        return f"scontrol {argv[1]}"
    return program


@contextmanager
def scheduler_command(argv: Sequence[str]) -> Iterator[None]:
    """Time one Slurm command and count its failure by typed error (``UnknownJobError`` → ``UnknownJob``)."""
    command, started = command_label(argv), time.monotonic()
    try:
        yield
    except Exception as exc:
        error = type(exc).__name__
        SCHEDULER_COMMAND_ERRORS.labels(command, error.removesuffix("Error") or error).inc()
        raise
    finally:
        SCHEDULER_COMMAND_DURATION.labels(command).observe(time.monotonic() - started)


# ---- the telemetry loop ---------------------------------------------------------------------------------------


class TelemetryCycles:
    """The telemetry loop's cycles: how long each took, whether it read the scheduler, and its lag (read at
    scrape time): the time since the last cycle that read the scheduler ended, beyond the discovery interval,
    so 0 while cycles keep their pace whatever the interval."""

    def __init__(self) -> None:
        self.last_ok, self.interval = time.monotonic(), 0.0

    def reset(self, interval: timedelta) -> None:
        """The loop starts, one cycle per ``interval``: its lag counts from now."""
        self.last_ok, self.interval = time.monotonic(), interval.total_seconds()

    def lag(self) -> float:
        return max(0.0, time.monotonic() - self.last_ok - self.interval)

    @contextmanager
    def cycle(self) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        except BaseException:
            TELEMETRY_CYCLES.labels("failed").inc()
            raise
        else:
            TELEMETRY_CYCLES.labels("ok").inc()
            self.last_ok = time.monotonic()
        finally:
            TELEMETRY_CYCLE_DURATION.observe(time.monotonic() - started)


TELEMETRY = TelemetryCycles()
TELEMETRY_LAG.set_function(TELEMETRY.lag)


# ---- the telemetry role's periodic look at the cluster ----------------------------------------------------


class _Attempt(Protocol):
    @property
    def index(self) -> int: ...


class WatchedJob(Protocol):
    """What :class:`ClusterView` reads of a telemetry tracker (:class:`lazarus.telemetry.tracker.JobTracker`)."""

    @property
    def closed(self) -> bool: ...

    @property
    def attempt(self) -> _Attempt | None: ...


RESTART_WINDOW = timedelta(hours=1)
MAX_PENDING_QUERIED = 100
"""Advice ages are read from at most this many waiting jobs per look (each is one ``status`` query)."""


@dataclass
class ClusterView:
    """Every ``metrics.cluster_view_interval``: the gauges that describe the cluster as a whole rather than one
    event (run by the telemetry role, where the trackers live)."""

    settings: Settings
    client: Client
    nodes: Callable[[], Awaitable[Sequence[NodeState]]]
    trackers: Mapping[int, WatchedJob]
    _attempts: dict[int, int] = field(default_factory=dict)
    _starts: dict[int, deque[datetime]] = field(default_factory=dict)

    async def run(self, stop: asyncio.Event) -> None:
        TELEMETRY.reset(self.settings.discovery.interval)
        interval = self.settings.metrics.cluster_view_interval.total_seconds()
        while not stop.is_set():
            await self.refresh(datetime.now(UTC))
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)

    async def refresh(self, now: datetime) -> None:
        self.jobs(now)
        await self._guarded("visibility", self._advice(now))
        view = await self._guarded("ledger", self._ledger())
        await self._guarded("scheduler", self._budget(view))

    def jobs(self, now: datetime) -> None:
        """Watched jobs, and the most new attempts one of them started within the hour."""
        watched = {job_id: t for job_id, t in self.trackers.items() if not t.closed and t.attempt is not None}
        for job_id, tracker in watched.items():
            assert tracker.attempt is not None
            index, seen = tracker.attempt.index, self._attempts.get(job_id)
            if seen is not None and index > seen:
                self._starts.setdefault(job_id, deque(maxlen=100)).extend([now] * min(index - seen, 100))
            self._attempts[job_id] = index
        for job_id in [j for j in self._attempts if j not in watched]:
            self._attempts.pop(job_id)
            self._starts.pop(job_id, None)
        for starts in self._starts.values():
            while starts and starts[0] < now - RESTART_WINDOW:
                starts.popleft()
        WATCHED_JOBS.set(len(watched))
        JOB_RESTARTS_MAX.set(max((len(s) for s in self._starts.values()), default=0))

    async def _advice(self, now: datetime) -> None:
        query = (
            f"WorkflowType = '{names.JOB_WORKFLOW}' AND ExecutionStatus = 'Running' "
            f"AND LazarusCluster = '{self.settings.cluster}' "
            f"AND RecoveryState = '{RecoveryState.AWAITING_APPROVAL.value}'"
        )
        count = (await self.client.count_workflows(query)).count
        oldest: datetime | None = None
        async for execution in self.client.list_workflows(query, limit=MAX_PENDING_QUERIED):
            try:
                handle = self.client.get_workflow_handle(execution.id)
                status: JobStatus = await handle.query(names.JOB_STATUS, result_type=JobStatus)
            except (RPCError, WorkflowQueryFailedError):
                continue  # it closed meanwhile, or answers later: the next look sees it
            advice = status.advice
            if advice is not None and advice.status == AdviceStatus.PENDING:
                oldest = advice.created_at if oldest is None else min(oldest, advice.created_at)
        ADVICE_PENDING.set(count)
        ADVICE_PENDING_AGE.set(max(0.0, (now - oldest).total_seconds()) if oldest else 0.0)

    async def _ledger(self) -> LedgerView:
        handle = self.client.get_workflow_handle(names.ledger_id(self.settings.cluster))
        view: LedgerView = await handle.query(names.LEDGER_VIEW, result_type=LedgerView)
        LEDGER_NODES.set(len(view.nodes))
        LEDGER_IMPLICATIONS.set(sum(len(n.implications) for n in view.nodes))
        NODES_DRAINED.labels("lazarus").set(sum(1 for n in view.nodes if n.drained_by_lazarus))
        NODES_DRAINED.labels("other").set(sum(1 for n in view.nodes if n.drained and not n.drained_by_lazarus))
        for pool in view.spares:
            SPARES_FREE.labels(pool.reservation).set(pool.spares_free)
            SPARES_USED.labels(pool.reservation).set(pool.spares_used)
            SPARES_SHORT.labels(pool.reservation).set(len(pool.short))
        return view

    async def _budget(self, view: LedgerView | None) -> None:
        nodes = await self.nodes()
        if not nodes:
            return  # an empty node list is not a cluster without nodes
        policy = view.policy if view is not None else self.settings.ledger
        drained = sum(1 for n in nodes if n.drained)
        DRAIN_BUDGET_REMAINING.set(max(0, policy.max_drained(len(nodes)) - drained))

    async def _guarded(self, source: str, step: Awaitable[T]) -> T | None:
        try:
            return await step
        except (LazarusError, RPCError, WorkflowQueryFailedError) as exc:
            CLUSTER_VIEW_ERRORS.labels(source).inc()
            logger.debug(f"metrics: cannot read the cluster's {source}: {exc}")
            return None


# ---- the endpoints -------------------------------------------------------------------------------------------


@dataclass
class Endpoint:
    """A running prometheus_client endpoint; :meth:`close` stops it."""

    url: str
    server: WSGIServer

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def register_roles(roles: Sequence[str]) -> None:
    """Serve the worker-side metrics of ``roles`` on :data:`REGISTRY` (each once per process)."""
    for spec in catalogue.CATALOGUE:
        if spec.source == "worker" and set(spec.roles) & set(roles) and spec.name not in _registered:
            collector: Collector = WORKER_METRICS[spec.name]
            REGISTRY.register(collector)
            _registered.add(spec.name)


def serve(settings: Settings, roles: Sequence[str]) -> Endpoint | None:
    """Start ``metrics.port`` for this process's ``roles``; None when it is off."""
    m = settings.metrics
    register_roles(roles)
    for role in roles:
        WORKER_INFO.labels(settings.cluster, role, __version__).set(1)
    if not m.port:
        return None
    try:
        server, _ = start_http_server(m.port, m.address, registry=REGISTRY)
    except OSError as exc:
        raise MetricsError(
            f"cannot serve metrics on {m.address}:{m.port} (metrics.port): {exc.strerror or exc}"
        ) from None
    endpoint = Endpoint(url=m.model_copy(update={"temporal_port": 0}).urls()[0], server=server)
    logger.info(f"serving Lazarus metrics at {endpoint.url}")
    return endpoint


_RUNTIMES: dict[str, Runtime] = {}


def temporal_runtime(metrics: MetricsSettings) -> Runtime | None:
    """The Temporal runtime serving the SDK's and the workflows' metrics on ``metrics.temporal_port``; None
    when it is off. One per address in a process (the exporter lives as long as the runtime)."""
    if not metrics.temporal_port:
        return None
    bind = f"{_host(metrics.address)}:{metrics.temporal_port}"
    if bind not in _RUNTIMES:
        buckets = {s.name: list(s.buckets) for s in catalogue.CATALOGUE if s.source == "workflow" and s.buckets}
        config = PrometheusConfig(bind_address=bind, durations_as_seconds=True, histogram_bucket_overrides=buckets)
        try:
            _RUNTIMES[bind] = Runtime(telemetry=TelemetryConfig(metrics=config))
        except Exception as exc:  # the SDK's core reports a bind failure as a plain exception
            raise MetricsError(f"cannot serve Temporal metrics on {bind} (metrics.temporal_port): {exc}") from None
        logger.info(f"serving Temporal SDK and workflow metrics at http://{bind}/metrics")
    return _RUNTIMES[bind]
