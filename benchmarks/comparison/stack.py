"""The comparison's own embedded stack: cluster ``lzbench`` under /var/tmp/lazarus-bench, on ports of its own.

The soak's machinery (:class:`benchmarks.soak.stack.ChaosStack`: Slurm and a Temporal dev server from the
``lazarus dev up`` components, three workers in act mode) with another cluster, so that killing a node's slurmd
never touches the tests' ``lztest``, the soak's ``lzchaos`` or a dev stack. One node agent per node runs on the
dev stack's fake NVML (a killed node's agent dies with it); the workers read them for drains and for liveness.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.soak.stack import ChaosStack
from lazarus.config import DevSettings
from lazarus.devstack.component import Component
from lazarus.devstack.node_agents import node_agent_components

BENCH_DEV = DevSettings(
    state_dir=Path("/var/tmp/lazarus-bench"),
    cluster_name="lzbench",
    temporal_port=63233,
    temporal_ui_port=64233,
    temporal_http_port=63243,
    slurmctld_port=63817,
    slurmd_port0=63001,
    slurmdbd_port=63819,
    mysql_port=63306,
    metrics_port=0,
    temporal_metrics_port=0,
    node_agent_port0=63401,
    nodes=4,
    gpus_per_node=4,
    accounting=False,
    workers=False,
)
BENCH_POLICY = "bench"
POLICIES: dict[str, dict[str, Any]] = {
    "default": {"hang_budget": 30},
    BENCH_POLICY: {
        "hang_budget": 30,
        "hang_budget_min": 10,
        "startup_grace": 60,
        "decision_timeout": 60,
        "attempt_start_timeout": 120,
        "max_attempts": 4,
        "selectable": True,
    },
}


class BenchStack(ChaosStack):
    """The soak's stack on cluster ``lzbench`` (or the one ``dev`` names), with node agents, liveness on, and
    discovery every 0.5 s."""

    def __init__(self, run_id: str, dev: DevSettings = BENCH_DEV) -> None:
        super().__init__(run_id=run_id, dev=dev)
        # the agents' default Xid window (the soak's is longer, to outlast its monitor-mode decisions)
        self.agents = node_agent_components(self.dev, self.layout, self.stack.daemon_env())

    @property
    def job_prefix(self) -> str:
        return f"bench-{self.run_id}-"

    @property
    def config_path(self) -> Path:
        return self.layout.root / "bench.yaml"

    def agent(self, node: str) -> Component:
        return next(a for a in self.agents if a.name == f"node-agent-{node}")

    def config(self) -> dict[str, Any]:
        """The soak's configuration, with discovery every 0.5 s, a 1 s node agent timeout and the bench policies."""
        cfg = super().config()
        cfg["discovery"]["interval"] = 0.5
        cfg["node_agents"]["timeout_s"] = 1.0
        cfg["policies"] = POLICIES
        return cfg
