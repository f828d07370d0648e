"""Attribution reads node-agent verdicts back from Prometheus: one query for all nodes, missing ones named."""

import pytest

from lazarus.health.fleet import NodeHealthRequest, NodeHealthResult, NodeHealthSummary, fetch_node_health
from lazarus.health.models import Verdict
from lazarus.straggler.prometheus import PrometheusThroughput
from tests.straggler.pushed_history import now_ms
from tests.straggler.remote_write import push

pytestmark = pytest.mark.prometheus


def _gauge(name: str, value: float, ts: int, **labels: str):
    return ({"__name__": name, **labels}, [(ts, value)])


@pytest.fixture(scope="module")
def agents_reported(prometheus_url):
    ts = now_ms()
    push(prometheus_url, [
        _gauge("lazarus_node_health", 0, ts, Hostname="fleet-a"),
        _gauge("lazarus_node_health", 2, ts, Hostname="fleet-b"),
        _gauge("lazarus_gpu_health", 0, ts, Hostname="fleet-b", gpu="0", UUID="GPU-b0"),
        _gauge("lazarus_gpu_health", 2, ts, Hostname="fleet-b", gpu="1", UUID="GPU-b1"),
        _gauge("DCGM_FI_DEV_XID_ERRORS", 79, ts, Hostname="fleet-b", gpu="1", UUID="GPU-b1"),
        _gauge("DCGM_FI_DEV_XID_ERRORS", 0, ts, Hostname="fleet-b", gpu="0", UUID="GPU-b0"),
        _gauge("lazarus_node_health", 1, ts, Hostname="fleet.c"),
    ])  # fmt: skip


def test_each_node_gets_its_verdict_failed_gpus_and_xids(prometheus_url, agents_reported):
    request = NodeHealthRequest(nodes=["fleet-a", "fleet-b", "fleet.c", "fleet-d"])
    result = fetch_node_health(PrometheusThroughput(prometheus_url), request)
    assert result == NodeHealthResult(
        nodes=[
            NodeHealthSummary(node="fleet-a", verdict=Verdict.HEALTHY),
            NodeHealthSummary(node="fleet-b", verdict=Verdict.FAILED, failed_gpus=["1"], xid_codes=[79]),
            NodeHealthSummary(node="fleet.c", verdict=Verdict.DEGRADED),
        ],
        missing=["fleet-d"],  # no agent data is not good news
    )


def test_node_names_that_could_change_the_query_are_refused():
    with pytest.raises(ValueError, match="node names may hold only"):
        NodeHealthRequest(nodes=['a"} or vector(1) #'])
