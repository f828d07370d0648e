"""The ``prometheus_find_stragglers`` activity: findings for the requested jobs, typed errors for the workflow."""

import uuid

import pytest
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.telemetry_prometheus import PrometheusActivities
from lazarus.config import PrometheusSettings
from lazarus.straggler.models import FindStragglersRequest, FindStragglersResult
from tests.straggler.pushed_history import job_history, now_ms, push_history

pytestmark = [pytest.mark.prometheus, pytest.mark.asyncio]


@pytest.fixture(scope="module")
def slow_job(prometheus_url):
    job_id = f"c{uuid.uuid4().hex[:8]}"
    end = now_ms() - 1000
    series = job_history(job_id, ["n1", "n2", "n3"], end, slow_node="n1", slow_from_ms=end - 5 * 60_000, seed=3)
    push_history(prometheus_url, series)
    return job_id


async def test_the_activity_returns_the_straggler_as_a_typed_finding(prometheus_url, slow_job):
    acts = PrometheusActivities.from_settings(PrometheusSettings(url=prometheus_url))
    result = await ActivityEnvironment().run(acts.find_stragglers, FindStragglersRequest(job_ids=[slow_job]))
    assert result.series == 3
    (finding,) = result.findings
    assert (finding.job_id, finding.node) == (slow_job, "n1")
    assert finding.to_diagnosis().implicated_nodes == ["n1"]
    payload = pydantic_data_converter.payload_converter.to_payloads([result])
    (decoded,) = pydantic_data_converter.payload_converter.from_payloads(payload, [FindStragglersResult])
    assert decoded == result


async def test_a_job_without_published_throughput_gives_no_findings(prometheus_url):
    acts = PrometheusActivities.from_settings(PrometheusSettings(url=prometheus_url))
    result = await ActivityEnvironment().run(acts.find_stragglers, FindStragglersRequest(job_ids=["424242"]))
    assert result == FindStragglersResult(findings=[], series=0)


async def test_an_unreachable_prometheus_is_a_retryable_application_error():
    acts = PrometheusActivities.from_settings(PrometheusSettings(url="http://127.0.0.1:1", timeout_s=1))
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.find_stragglers, FindStragglersRequest(job_ids=["1"]))
    assert info.value.type == "PrometheusUnavailable" and not info.value.non_retryable


async def test_a_malformed_job_id_is_refused_without_retry():
    acts = PrometheusActivities.from_settings(PrometheusSettings(url="http://127.0.0.1:1"))
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(acts.find_stragglers, FindStragglersRequest(job_ids=['1"} or vector(1)']))
    assert info.value.type == "InvalidArgument" and info.value.non_retryable
