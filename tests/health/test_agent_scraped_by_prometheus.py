"""End to end: a real Prometheus scrapes the node agent, and attribution reads the verdict back from it."""

import shutil
import time

import pytest

from lazarus.health.fleet import NodeHealthRequest, NodeHealthSummary, fetch_node_health
from lazarus.health.models import Verdict
from lazarus.straggler.prometheus import PrometheusApi
from tests.straggler.prometheus_server import running_prometheus

pytestmark = [
    pytest.mark.prometheus,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="the Debian 'prometheus' package is not installed"),
]
PROMETHEUS_PORTS = range(19090, 19100)


def test_a_failed_gpu_reaches_attribution_through_a_real_scrape(gpus, served_agent, tmp_path):
    gpus.xid(1, 79)
    _, agent_port = served_agent
    config = (
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        f"scrape_configs:\n  - job_name: lazarus-node-agent\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{agent_port}']\n"
    )
    with running_prometheus(tmp_path, config, PROMETHEUS_PORTS) as url:
        api = PrometheusApi(url, timeout_s=2)
        request = NodeHealthRequest(nodes=["gpu-node-9"])
        deadline = time.monotonic() + 30  # Prometheus 2.42 takes about 5-6 s to the first scrape
        while (result := fetch_node_health(api, request)).missing and time.monotonic() < deadline:
            time.sleep(0.5)
    assert result.nodes == [
        NodeHealthSummary(node="gpu-node-9", verdict=Verdict.FAILED, failed_gpus=["1"], xid_codes=[79])
    ]
