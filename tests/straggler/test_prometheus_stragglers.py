"""Against a real Prometheus fed by remote write: one query for all jobs names the slow node, and only it."""

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from lazarus.straggler.prometheus import (
    PrometheusQueryError,
    PrometheusThroughput,
    PrometheusUnavailableError,
    ThroughputQuery,
)
from tests.straggler.pushed_history import job_history, now_ms, push_history

pytestmark = pytest.mark.prometheus
NODES = ["gpu-01", "gpu-02", "gpu-03", "gpu-04"]


@pytest.fixture(scope="module")
def two_jobs(prometheus_url):
    """Job A: gpu-03 runs 40% slower for the last 6 minutes. Job B: healthy, +-5% jitter."""
    end = now_ms()
    slow, healthy = f"a{uuid.uuid4().hex[:8]}", f"b{uuid.uuid4().hex[:8]}"
    push_history(prometheus_url, job_history(slow, NODES, end, slow_node="gpu-03", slow_from_ms=end - 6 * 60_000))
    push_history(prometheus_url, job_history(healthy, NODES, end, seed=1))
    return slow, healthy, datetime.fromtimestamp(end / 1000, UTC)


def test_the_slow_node_is_named_and_the_healthy_job_is_left_alone(prometheus_url, two_jobs):
    slow, healthy, end = two_jobs
    series = PrometheusThroughput(prometheus_url).fetch(ThroughputQuery(job_ids=[slow, healthy]), end=end)
    assert {(s.job_id, s.node) for s in series} == {(j, n) for j in (slow, healthy) for n in NODES}
    (finding,) = find_stragglers(series, StragglerThresholds())
    assert (finding.job_id, finding.node) == (slow, "gpu-03")
    assert finding.drop_fraction == pytest.approx(0.4, abs=0.07)
    assert finding.windows >= 5


def test_per_rank_series_name_both_ranks_of_the_slow_node(prometheus_url, two_jobs):
    slow, _, end = two_jobs
    series = PrometheusThroughput(prometheus_url).fetch(ThroughputQuery(job_ids=[slow], level="rank"), end=end)
    assert len(series) == 8
    findings = find_stragglers(series, StragglerThresholds())
    assert sorted((f.node, f.rank) for f in findings) == [("gpu-03", "4"), ("gpu-03", "5")]


def test_without_job_ids_every_published_job_is_read(prometheus_url, two_jobs):
    slow, healthy, end = two_jobs
    series = PrometheusThroughput(prometheus_url).fetch(ThroughputQuery(), end=end)
    assert {slow, healthy} <= {s.job_id for s in series}


def test_an_unreachable_prometheus_is_a_clear_typed_error_at_once():
    started = time.monotonic()
    with pytest.raises(PrometheusUnavailableError, match=r"Prometheus at http://127.0.0.1:1 is unreachable"):
        PrometheusThroughput("http://127.0.0.1:1", timeout_s=2).fetch(ThroughputQuery(job_ids=["1"]))
    assert time.monotonic() - started < 1.0  # no client retries with backoff


def test_a_query_prometheus_refuses_is_a_query_error(prometheus_url):
    too_many_points = ThroughputQuery(job_ids=["1"], window=timedelta(seconds=1), lookback=timedelta(hours=4))
    with pytest.raises(PrometheusQueryError, match="rejected the throughput query"):
        PrometheusThroughput(prometheus_url).fetch(too_many_points)
