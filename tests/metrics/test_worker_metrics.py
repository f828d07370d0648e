"""Spec: a worker's own metrics. Every Slurm command is timed and its typed failure counted by command; the
telemetry loop's cycles and lag are measured; the cluster view counts how often each watched job restarted
within the hour; and a worker's endpoint serves exactly the metrics of the roles it runs."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from lazarus import metrics
from lazarus.config import MetricsSettings, Settings
from lazarus.errors import LazarusError
from lazarus.models import metrics as catalogue
from lazarus.models.ledger import LedgerPolicy
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import UnknownJobError
from lazarus.slurm.transport import LocalTransport
from tests.health.helpers import free_port
from tests.metrics.promql import REPO
from workflows.ledger_rules import drain_allowed

PORTS = range(19464, 19480)


def sample(metric: metrics.MetricWrapperBase, name: str, **labels: str) -> float:
    """The current value of one series of ``metric`` (0 when it has none yet)."""
    for family in metric.collect():
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return float(s.value)
    return 0.0


def test_every_worker_metric_of_the_catalogue_is_built_with_its_kind_and_labels():
    worker = {s.name: s for s in catalogue.CATALOGUE if s.source == "worker"}
    assert set(metrics.WORKER_METRICS) == set(worker)
    for name, metric in metrics.WORKER_METRICS.items():
        assert metric._type == worker[name].kind  # prometheus_client's own kind name
        assert tuple(metric._labelnames) == worker[name].labels


def test_the_command_label_is_the_program_with_scontrols_subcommand():
    assert metrics.command_label(["squeue", "--json"]) == "squeue"
    assert metrics.command_label(["scontrol", "requeuehold", "42"]) == "scontrol requeuehold"
    assert metrics.command_label(["/usr/bin/sacct", "-P"]) == "sacct"
    assert metrics.command_label(["scontrol", "--details", "show"]) == "scontrol"
    assert metrics.command_label(["Weird Program!"]) == "other"


@pytest.mark.slurm
@pytest.mark.asyncio
async def test_a_real_slurm_command_is_timed_and_its_typed_failure_counted(slurm_cluster):
    client = SlurmClient(LocalTransport(slurm_cluster.slurm_conf))
    durations = "lazarus_scheduler_command_duration_seconds"

    def failures() -> float:
        return sample(
            metrics.SCHEDULER_COMMAND_ERRORS,
            "lazarus_scheduler_command_errors_total",
            command="scontrol show",
            error="UnknownJob",
        )

    before, failed = sample(metrics.SCHEDULER_COMMAND_DURATION, f"{durations}_count", command="squeue"), failures()
    await client.jobs()
    with pytest.raises(UnknownJobError):
        await client.job(4_000_000_000)
    assert sample(metrics.SCHEDULER_COMMAND_DURATION, f"{durations}_count", command="squeue") == before + 1
    assert sample(metrics.SCHEDULER_COMMAND_DURATION, f"{durations}_sum", command="squeue") > 0
    assert failures() == failed + 1


def test_a_failed_cycle_counts_as_failed_and_the_lag_grows_until_a_cycle_reads_the_scheduler():
    cycles = metrics.TelemetryCycles()
    cycles.reset(timedelta(seconds=0.05))
    failed = sample(metrics.TELEMETRY_CYCLES, "lazarus_telemetry_cycles_total", result="failed")
    with pytest.raises(LazarusError), cycles.cycle():
        raise LazarusError("slurmctld unreachable")
    time.sleep(0.2)
    assert sample(metrics.TELEMETRY_CYCLES, "lazarus_telemetry_cycles_total", result="failed") == failed + 1
    assert cycles.lag() >= 0.15 - 0.05
    with cycles.cycle():
        pass
    assert cycles.lag() == 0.0  # within its interval again


@dataclass
class Attempt:
    index: int


@dataclass
class Tracker:
    attempt: Attempt | None
    closed: bool = False


def test_restarts_within_the_hour_count_per_job_and_only_those_seen():
    trackers = {1: Tracker(Attempt(5)), 2: Tracker(Attempt(0)), 3: Tracker(None)}
    view = metrics.ClusterView(Settings(), client=None, nodes=None, trackers=trackers)  # type: ignore[arg-type]
    t0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
    view.jobs(t0)  # first sight at attempt 5: earlier attempts are not this hour's business
    assert sample(metrics.JOB_RESTARTS_MAX, "lazarus_job_restarts_last_hour_max") == 0
    assert sample(metrics.WATCHED_JOBS, "lazarus_watched_jobs") == 2  # job 3 has no attempt yet
    trackers[2].attempt = Attempt(2)  # two restarts between two looks
    trackers[1].attempt = Attempt(6)
    view.jobs(t0 + timedelta(minutes=10))
    assert sample(metrics.JOB_RESTARTS_MAX, "lazarus_job_restarts_last_hour_max") == 2
    trackers[2].attempt = Attempt(3)
    view.jobs(t0 + timedelta(minutes=50))
    assert sample(metrics.JOB_RESTARTS_MAX, "lazarus_job_restarts_last_hour_max") == 3
    view.jobs(t0 + timedelta(minutes=75))  # the first two are more than an hour old
    assert sample(metrics.JOB_RESTARTS_MAX, "lazarus_job_restarts_last_hour_max") == 1
    trackers[2].closed = True
    view.jobs(t0 + timedelta(minutes=76))
    assert sample(metrics.JOB_RESTARTS_MAX, "lazarus_job_restarts_last_hour_max") == 0
    assert sample(metrics.WATCHED_JOBS, "lazarus_watched_jobs") == 1


def test_the_drain_budget_gauge_agrees_with_the_ledgers_drain_rule():
    for fraction in (0.01, 0.1, 0.25, 1 / 3, 0.5, 0.9, 1.0):
        policy = LedgerPolicy(max_drain_fraction=fraction)
        for size in range(1, 200):
            most = policy.max_drained(size)
            assert drain_allowed(most - 1, size, policy) or most == 0
            assert not drain_allowed(most, size, policy)


SERVE = """
import sys, urllib.request
from lazarus import metrics
from lazarus.config import MetricsSettings, Settings
settings = Settings(cluster="c1", metrics=MetricsSettings(port=int(sys.argv[1]), address="127.0.0.1"))
endpoint = metrics.serve(settings, sys.argv[2].split(","))
print(urllib.request.urlopen(endpoint.url, timeout=5).read().decode())
"""


def _scrape(roles: str) -> str:
    port = free_port(PORTS)
    proc = subprocess.run(
        [sys.executable, "-c", SERVE, str(port), roles], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_an_endpoint_serves_the_metrics_of_its_roles_and_no_others():
    scheduler = _scrape("scheduler")
    assert 'lazarus_worker_info{cluster="c1",role="scheduler",version=' in scheduler
    assert "# HELP lazarus_scheduler_command_duration_seconds" in scheduler
    assert "lazarus_telemetry_lag_seconds" not in scheduler and "lazarus_advice_pending" not in scheduler
    assert "process_cpu_seconds_total" in scheduler
    telemetry = _scrape("control,telemetry")
    assert 'role="control"' in telemetry and 'role="telemetry"' in telemetry
    for name in ("lazarus_telemetry_lag_seconds", "lazarus_advice_pending", "lazarus_drain_budget_remaining_nodes"):
        assert f"# HELP {name}" in telemetry


def test_a_port_in_use_fails_with_one_sentence_naming_the_setting():
    port = free_port(PORTS)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        settings = Settings(metrics=MetricsSettings(port=port, address="127.0.0.1"))
        with pytest.raises(metrics.MetricsError, match=rf"cannot serve metrics on 127.0.0.1:{port} \(metrics.port\)"):
            metrics.serve(settings, ["control"])


def test_the_endpoint_urls_follow_the_settings():
    assert MetricsSettings().urls() == []
    assert MetricsSettings(port=9464, temporal_port=9465).urls("pod-1") == [
        "http://pod-1:9464/metrics",
        "http://pod-1:9465/metrics",
    ]
    assert MetricsSettings(port=9464, address="::").urls() == ["http://[::]:9464/metrics"]
    with pytest.raises(ValueError, match="must differ"):
        MetricsSettings(port=9464, temporal_port=9464)


def test_a_served_endpoint_answers_over_http():
    port = free_port(PORTS)
    endpoint = metrics.serve(Settings(metrics=MetricsSettings(port=port, address="127.0.0.1")), ["scheduler"])
    assert endpoint is not None
    try:
        with urllib.request.urlopen(endpoint.url, timeout=5) as reply:
            assert reply.status == 200 and b"lazarus_worker_info" in reply.read()
    finally:
        endpoint.close()


def test_the_temporal_exporter_serves_workflow_histograms_with_the_catalogues_buckets():
    port = free_port(PORTS)
    runtime = metrics.temporal_runtime(MetricsSettings(temporal_port=port, address="127.0.0.1"))
    assert runtime is not None
    spec = catalogue.ACTION_LATENCY
    runtime.metric_meter.create_histogram_float(spec.name, spec.help, "s").record(4.0, {"until": "requeue_verified"})
    deadline, text = time.monotonic() + 10, ""
    while spec.name not in text and time.monotonic() < deadline:
        time.sleep(0.2)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    buckets = {line.split('le="')[1].split('"')[0] for line in text.splitlines() if f"{spec.name}_bucket" in line}
    assert buckets == {f"{b:g}" for b in spec.buckets} | {"+Inf"}
    assert f"# HELP {spec.name} {spec.help}" in text


def test_a_temporal_metrics_port_in_use_fails_with_one_sentence_naming_the_setting():
    port = free_port(PORTS)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        with pytest.raises(metrics.MetricsError, match=r"\(metrics.temporal_port\): .*in use"):
            metrics.temporal_runtime(MetricsSettings(temporal_port=port, address="127.0.0.1"))
