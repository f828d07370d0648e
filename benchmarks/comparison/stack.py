"""The comparison's own embedded stack: cluster ``lzbench`` under /var/tmp/lazarus-bench, on ports of its own.

The soak's machinery (:class:`benchmarks.soak.stack.ChaosStack`: Slurm and a Temporal dev server from the
``lazarus dev up`` components, three workers in act mode) with another cluster, so that killing a node's slurmd
never touches the tests' ``lztest``, the soak's ``lzchaos`` or a dev stack. One node agent per node runs on the
dev stack's fake NVML (a killed node's agent dies with it); the workers ask them directly for liveness. A Prometheus
(benchmarks/comparison/prometheus.py) scrapes every training rank's throughput and the node agents, as in
production: the workers' straggler detection and their node-health reads before a drain query it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.comparison import prometheus
from benchmarks.soak.stack import ChaosStack
from lazarus.config import DevSettings
from lazarus.devstack.component import Component
from lazarus.devstack.node_agents import agent_urls, node_agent_components
from lazarus.devstack.stack import UpReport

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
# The detector's window (a query step, whole seconds) and how often telemetry asks: the bench's budgets are
# seconds where production's are minutes (policy ``bench``: hang budget at least 10 s, so a digest every 7.5 s).
STRAGGLER_WINDOW_S = 2
STRAGGLER_INTERVAL_S = 1.0
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

    def __init__(
        self,
        run_id: str,
        dev: DevSettings = BENCH_DEV,
        act_on_stragglers: bool = False,
        prometheus_port: int = prometheus.PORT,
    ) -> None:
        """``act_on_stragglers``: the bench policy restarts a job away from a straggler (by default, as in the
        policy's default, a straggler gets advice only). ``dev`` and ``prometheus_port``: another stack built on
        this one (the restore benchmark's) runs on its own cluster and ports."""
        super().__init__(run_id=run_id, dev=dev)
        self.act_on_stragglers = act_on_stragglers
        self.prometheus_port = prometheus_port
        # the agents' default Xid window (the soak's is longer, to outlast its monitor-mode decisions)
        self.agents = node_agent_components(self.dev, self.layout, self.stack.daemon_env())
        self.agent_targets = [u.removeprefix("http://").removesuffix("/metrics") for u in agent_urls(self.dev).values()]
        self.prometheus = prometheus.component(
            self.layout, self.stack.daemon_env(), self.agent_targets, self.prometheus_port
        )

    @property
    def job_prefix(self) -> str:
        return f"bench-{self.run_id}-"

    @property
    def config_path(self) -> Path:
        return self.layout.root / "bench.yaml"

    @property
    def metrics_sd_dir(self) -> Path:
        """Where each rank registers its throughput endpoint for Prometheus (the trainer's ``--metrics-sd-dir``)."""
        return prometheus.targets_dir(self.layout)

    def up(self) -> UpReport:
        """The soak's stack, then a fresh Prometheus (its TSDB emptied)."""
        report = super().up()
        self.prometheus.stop(self.layout)
        self.prometheus.ensure(self.layout)
        report.started.append(self.prometheus.name)
        return report

    def down(self) -> None:
        self.prometheus.stop(self.layout)
        super().down()

    def agent(self, node: str) -> Component:
        return next(a for a in self.agents if a.name == f"node-agent-{node}")

    def config(self) -> dict[str, Any]:
        """The soak's configuration, with discovery every 0.5 s, a 1 s node agent timeout, the bench policies and the
        bench's Prometheus (straggler windows of 2 s, checked every second)."""
        cfg = super().config()
        cfg["discovery"]["interval"] = 0.5
        cfg["node_agents"]["timeout_s"] = 1.0
        cfg["policies"] = {**POLICIES, BENCH_POLICY: {**POLICIES[BENCH_POLICY]}}
        if self.act_on_stragglers:
            cfg["policies"][BENCH_POLICY]["act_on_stragglers"] = True
        cfg["prometheus"] = {
            "enabled": True,
            "url": prometheus.url(self.prometheus_port),
            "timeout_s": 2.0,
            "straggler_interval": STRAGGLER_INTERVAL_S,
            "straggler_window": STRAGGLER_WINDOW_S,
        }
        return cfg
