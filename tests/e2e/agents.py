"""The node agents an end-to-end test runs: one `lazarus node-agent` per node of the test cluster, each on its own
fake GPUs (the fake libnvidia-ml), where the worker reads them (``node_agents.urls`` in the stack's settings).
A drain needs corroboration from outside the job; a node agent that sees the Xid gives it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lazarus.devstack.fake_nvml import FakeGpuScript, build_fake_nvml
from lazarus.devstack.node_agents import agent_argv
from tests.e2e.stack import E2EStack, wait_port


@contextmanager
def node_agents(e2e: E2EStack, tmp_path: Path) -> Iterator[Path]:
    """One `lazarus node-agent` per node where the worker reads them, each on its own healthy fake GPUs, all
    serving before this returns (each logs to ``agent-<node>.log``); yields the directory of their scripts
    (``<dir>/<node>/``)."""
    library = build_fake_nvml(tmp_path / "lib")
    if library is None:
        pytest.skip("gcc is needed to build the fake libnvidia-ml.so.1")
    agents = []
    for node in e2e.cluster.nodes:
        gpus = FakeGpuScript(tmp_path / "gpus" / node)
        gpus.create(4)
        log = open(tmp_path / f"agent-{node}.log", "ab")  # noqa: SIM115 - the agent writes it for its lifetime
        agents.append(
            subprocess.Popen(
                agent_argv(node, e2e.agent_port(node), 0.5, library),
                env={**os.environ, **gpus.env()},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    try:
        for node, agent in zip(e2e.cluster.nodes, agents, strict=True):
            wait_port(e2e.agent_port(node), proc=agent)
        yield tmp_path / "gpus"
    finally:
        for agent in agents:
            agent.terminate()
            agent.wait(timeout=10)
