"""With its workers, the dev stack runs one node agent per fake node, each on its own fake NVML script (built with
gcc from the C source Lazarus ships), and lists their endpoints in its lazarus.yaml: a GPU failure injected into
one node's fake NVML is that node's agent verdict, which the node ledger reads to corroborate a drain."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from lazarus.config import DevSettings, NodeAgentSettings
from lazarus.devstack import fake_nvml
from lazarus.devstack.fake_nvml import build_fake_nvml
from lazarus.devstack.node_agents import fake_gpus, library_dir
from lazarus.devstack.stack import DevStack, UpReport
from lazarus.devstack.stack_config import stack_config
from lazarus.health.verdicts import node_verdicts
from lazarus.models.ledger import NodeHealthQuery

AGENT_PORTS = range(19521, 19541, 2)  # this file's ports: two agents each


def free_pair() -> int:
    for port in AGENT_PORTS:
        if all(_free(p) for p in (port, port + 1)):
            return port
    raise RuntimeError("no two free ports")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def dev_settings(tmp_path: Path, **kw) -> DevSettings:
    return DevSettings(state_dir=tmp_path / "state", nodes=2, cluster_name="lzagents", **kw)


def test_agents_run_only_with_the_workers(tmp_path):
    names = [c.name for c in DevStack(dev_settings(tmp_path)).components()]
    assert [n for n in names if n.startswith("node-agent-")] == ["node-agent-node1", "node-agent-node2"]
    assert names.index("node-agent-node2") < names.index("workers")
    for off in ({"workers": False}, {"node_agents": False}):
        assert not any(c.name.startswith("node-agent-") for c in DevStack(dev_settings(tmp_path, **off)).components())


def test_without_gcc_the_stack_runs_without_agents_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(fake_nvml.shutil, "which", lambda name: None)
    stack, report = DevStack(dev_settings(tmp_path)), UpReport()
    stack._build_fake_nvml(report)
    assert not stack.parts.node_agents and "gcc is needed" in report.notes[0]
    assert "node_agents" not in stack_config(stack.dev, stack.layout, stack.parts.node_agents)


def test_an_xid_injected_into_one_fake_node_is_that_nodes_agent_verdict(tmp_path):
    dev = dev_settings(tmp_path, node_agent_port0=free_pair())
    stack = DevStack(dev)
    stack.layout.create_dirs()
    if build_fake_nvml(library_dir(stack.layout)) is None:
        pytest.skip("gcc is needed to build the fake libnvidia-ml.so.1")
    agents = [c for c in stack.components() if c.name.startswith("node-agent-")]
    settings = NodeAgentSettings.model_validate(stack_config(dev, stack.layout, node_agents=True)["node_agents"])
    query = NodeHealthQuery(nodes=["node1", "node2"])
    try:
        for agent in agents:
            agent.ensure(stack.layout)
        fake_gpus(stack.layout, "node2").xid(0, 79)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            report = node_verdicts(query, None, settings)
            if [v.failed for v in report.verdicts] == [False, True]:
                break
            time.sleep(0.3)
        assert [(v.node, v.failed, v.detail) for v in report.verdicts] == [
            ("node1", False, "healthy"),
            ("node2", True, "failed (Xid 79)"),
        ], report
    finally:
        for agent in agents:
            agent.stop(stack.layout)
