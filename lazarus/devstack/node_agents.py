"""One node agent per fake node of the dev stack, each on its own fake NVML script.

``lazarus node-agent --node nodeI`` listens on 127.0.0.1:``node_agent_port0 + I - 1``
and reads a fake ``libnvidia-ml.so.1`` (built with gcc at ``dev up``, see
:mod:`lazarus.devstack.fake_nvml`) scripted by ``<state>/nvml/nodeI/``. The
``lazarus.yaml`` that ``dev up`` writes lists their endpoints under
``node_agents.urls``, so the node ledger reads each node's verdict before it
drains it: a GPU failure the demo injects into a node's fake NVML corroborates
the Xid line its job prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lazarus.config import DevSettings
from lazarus.devstack.component import Component, port_open
from lazarus.devstack.fake_nvml import LIBRARY, FakeGpuScript
from lazarus.devstack.layout import Layout
from lazarus.devstack.slurm_conf import node_names

POLL_INTERVAL_S = 1.0
XID_WINDOW_S = 600.0  # an injected Xid keeps the node failed for ten minutes (the demo's drain needs less)


def library_dir(layout: Layout) -> Path:
    return layout.root / "lib"


def fake_gpus(layout: Layout, node: str) -> FakeGpuScript:
    """The script of ``node``'s fake GPUs (the demo writes its Xid here)."""
    return FakeGpuScript(layout.root / "nvml" / node)


def agent_port(dev: DevSettings, node_index: int) -> int:
    """Port of the agent of ``node<node_index>`` (1-based)."""
    return dev.node_agent_port0 + node_index - 1


def agent_urls(dev: DevSettings) -> dict[str, str]:
    """Each node's metrics endpoint, for ``node_agents.urls`` in the stack's lazarus.yaml."""
    return {node: f"http://127.0.0.1:{agent_port(dev, i)}/metrics" for i, node in enumerate(node_names(dev), start=1)}


def agent_argv(node: str, port: int, interval: float, library: Path) -> list[str]:
    """The command line of one node's agent on loopback, reading GPUs through ``library`` (the fake NVML)."""
    return [
        sys.executable,
        "-m",
        "lazarus.cli.main",
        "node-agent",
        "--node",
        node,
        "--address",
        "127.0.0.1",
        "--port",
        str(port),
        "--interval",
        str(interval),
        "--nvml-library",
        str(library),
    ]


def node_agent_components(
    dev: DevSettings, layout: Layout, env: dict[str, str], xid_window: float = XID_WINDOW_S
) -> list[Component]:
    """One agent per node; ``xid_window``: how long an agent keeps a node failed after an Xid it saw."""
    return [_agent(dev, layout, env, i, node, xid_window) for i, node in enumerate(node_names(dev), start=1)]


def _agent(
    dev: DevSettings, layout: Layout, env: dict[str, str], index: int, node: str, xid_window: float
) -> Component:
    port, script = agent_port(dev, index), fake_gpus(layout, node)
    argv = [
        *agent_argv(node, port, POLL_INTERVAL_S, library_dir(layout) / LIBRARY),
        "--xid-window",
        str(xid_window),
    ]
    return Component(
        name=f"node-agent-{node}",
        argv=argv,
        env={**env, **script.env()},
        port=port,
        ready=lambda: port_open(port),
        prepare=lambda: script.create(dev.gpus_per_node),
    )
