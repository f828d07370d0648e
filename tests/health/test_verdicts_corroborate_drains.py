"""The node agents' verdict that the node ledger asks for before a drain (activity ``node_health``): read from a
real agent's endpoint, or from Prometheus; an agent vouches only for its own node, a stale verdict is none, and
what cannot be read is said."""

from __future__ import annotations

import time
import urllib.request
from datetime import UTC, datetime, timedelta

from lazarus.config import NodeAgentSettings
from lazarus.health.verdicts import node_verdicts
from lazarus.models.ledger import NodeHealthQuery, NodeHealthVerdict
from tests.health.helpers import AGENT_PORTS, free_port

NODE = "gpu-node-9"  # the served agent's node


def agents_at(port: int, **kw) -> NodeAgentSettings:
    return NodeAgentSettings(urls={NODE: f"http://127.0.0.1:{port}/metrics"}, **kw)


def wait_until_served(port: int) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the agent never served its metrics")


def read_until(query: NodeHealthQuery, agents: NodeAgentSettings, failed: bool) -> list[NodeHealthVerdict]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        report = node_verdicts(query, None, agents)
        if report.verdicts and report.verdicts[0].failed == failed:
            return report.verdicts
        time.sleep(0.2)
    raise AssertionError(f"no {'failed' if failed else 'healthy'} verdict; last report: {report}")


def test_a_healthy_node_and_then_its_xid_79_as_its_agent_reports_them(served_agent, gpus):
    _, port = served_agent
    wait_until_served(port)
    query = NodeHealthQuery(nodes=[NODE])
    assert read_until(query, agents_at(port), failed=False) == [
        NodeHealthVerdict(node=NODE, failed=False, detail="healthy")
    ]
    gpus.xid(1, 79)
    assert read_until(query, agents_at(port), failed=True) == [
        NodeHealthVerdict(node=NODE, failed=True, detail="failed (Xid 79)")
    ]


def test_an_agent_vouches_only_for_its_own_node_and_a_stale_verdict_is_none(served_agent, gpus):
    _, port = served_agent
    wait_until_served(port)
    elsewhere = NodeAgentSettings(urls={"node2": f"http://127.0.0.1:{port}/metrics"})  # gpu-node-9's agent
    assert node_verdicts(NodeHealthQuery(nodes=["node2"]), None, elsewhere).verdicts == []
    later = datetime.now(UTC) + timedelta(minutes=10)
    assert node_verdicts(NodeHealthQuery(nodes=[NODE]), None, agents_at(port), now=later).verdicts == []


def test_what_cannot_be_read_is_said():
    nothing = node_verdicts(NodeHealthQuery(nodes=["node1"]), None, NodeAgentSettings())
    assert nothing.verdicts == [] and "no node agent source configured" in nothing.unavailable
    port = free_port(AGENT_PORTS)  # nobody listens there
    down = node_verdicts(NodeHealthQuery(nodes=[NODE]), None, agents_at(port, timeout_s=1))
    assert down.verdicts == [] and down.unavailable.startswith(f"{NODE}: URLError")


def test_a_url_template_names_every_node_and_a_hostile_name_is_never_put_in_a_url():
    agents = NodeAgentSettings(url_template="http://{node}:1/metrics", timeout_s=0.5)
    report = node_verdicts(NodeHealthQuery(nodes=["node1", "x/../y", "a b"]), None, agents)
    assert report.verdicts == [] and report.unavailable.startswith("node1: ") and "x/../y" not in report.unavailable


class FakePrometheus:
    """What fetch_node_health reads: one instant query's items."""

    def instant(self, what: str, expr: str) -> list[dict]:
        return [
            {"metric": {"__name__": "lazarus_node_health", "Hostname": "node1"}, "value": [0, "2"]},
            {"metric": {"__name__": "DCGM_FI_DEV_XID_ERRORS", "Hostname": "node1", "gpu": "0"}, "value": [0, "48"]},
            {"metric": {"__name__": "lazarus_node_health", "Hostname": "node2"}, "value": [0, "0"]},
        ]


def test_prometheus_wins_when_it_collects_the_agents():
    report = node_verdicts(
        NodeHealthQuery(nodes=["node1", "node2", "node3"]),
        FakePrometheus(),
        NodeAgentSettings(url_template="http://{node}:1/metrics"),
    )
    assert report.verdicts == [
        NodeHealthVerdict(node="node1", failed=True, detail="failed (Xid 48)"),
        NodeHealthVerdict(node="node2", failed=False, detail="healthy"),
    ]
