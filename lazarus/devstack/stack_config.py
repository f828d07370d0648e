"""The ``lazarus.yaml`` that ``dev up`` writes for workers and the CLI.

It is an ordinary Lazarus configuration file (the same schema operators
write), pointing at this stack's Temporal server and Slurm cluster, so
``LAZARUS_CONFIG=<state>/lazarus.yaml`` is all a process needs to join it.
"""

from __future__ import annotations

from typing import Any

import yaml

from lazarus.config import DevSettings, MetricsSettings
from lazarus.devstack.inbox import inbox_url
from lazarus.devstack.layout import Layout
from lazarus.devstack.node_agents import agent_urls


def stack_metrics(dev: DevSettings) -> MetricsSettings:
    """Where the stack's workers serve their metrics: on loopback, on the ports ``dev`` assigns."""
    return MetricsSettings(port=dev.metrics_port, temporal_port=dev.temporal_metrics_port, address="127.0.0.1")


def stack_config(dev: DevSettings, layout: Layout, node_agents: bool = False, inbox: bool = False) -> dict[str, Any]:
    """The stack's configuration; ``node_agents``: the stack runs one agent per node, read before a drain;
    ``inbox``: it runs the webhook inbox, which gets every notice as JSON (``<state>/notices.jsonl``)."""
    config: dict[str, Any] = {
        "cluster": dev.cluster_name,
        "temporal": {
            "address": f"127.0.0.1:{dev.temporal_port}",
            "namespace": "default",
            "ui_url": f"http://127.0.0.1:{dev.temporal_ui_port}",
        },
        "scheduler": {"transport": "local", "slurm_conf": str(layout.slurm_conf)},
        "metrics": stack_metrics(dev).model_dump(mode="json"),
        "dev": dev.model_dump(mode="json"),
    }
    if inbox:
        config["notifications"] = {"webhooks": [{"url": inbox_url(dev), "format": "json"}]}
    if node_agents:
        config["node_agents"] = {"urls": agent_urls(dev)}
    return config


def write_lazarus_yaml(dev: DevSettings, layout: Layout, node_agents: bool = False, inbox: bool = False) -> None:
    text = "# Written by `lazarus dev up`; rewritten on every up.\n" + yaml.safe_dump(
        stack_config(dev, layout, node_agents, inbox), sort_keys=False
    )
    tmp = layout.lazarus_yaml.with_suffix(".yaml.tmp")
    tmp.write_text(text)
    tmp.replace(layout.lazarus_yaml)
