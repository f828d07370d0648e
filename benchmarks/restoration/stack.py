"""The restore benchmark's own embedded stack: cluster ``lzrestore`` under /var/tmp/lazarus-restore, ports 62600-62899.

The comparison's stack (:class:`benchmarks.comparison.stack.BenchStack`, itself the soak's) on another cluster, with
the same configuration builder and three more policies: one with a spare pool (the reservation
:data:`RESERVATION`, one spare), one with expedited requeue, one with neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.comparison.stack import BENCH_POLICY, POLICIES, BenchStack
from lazarus.config import DevSettings

RESTORE_PROMETHEUS_PORT = 62690
"""Its Prometheus (the comparison stack's component, on a port of this stack's range)."""
RESTORE_DEV = DevSettings(
    state_dir=Path("/var/tmp/lazarus-restore"),
    cluster_name="lzrestore",
    temporal_port=62633,
    temporal_ui_port=62634,
    temporal_http_port=62643,
    slurmctld_port=62817,
    slurmd_port0=62601,
    slurmdbd_port=62819,
    mysql_port=62806,
    metrics_port=0,
    temporal_metrics_port=0,
    node_agent_port0=62701,
    inbox_port=0,
    nodes=4,
    gpus_per_node=4,
    accounting=False,
    workers=False,
)
RESERVATION = "lzrestore-spares"
SPARES_POLICY, EXPEDITE_POLICY, PLAIN_POLICY = "restore-spares", "restore-expedite", "restore-plain"
# the bench policy, with room for a restart to wait in a full queue (Lazarus gives up on a start after this long)
_WAITS = {**POLICIES[BENCH_POLICY], "attempt_start_timeout": 600}
RESTORE_POLICIES: dict[str, dict[str, Any]] = {
    SPARES_POLICY: {**_WAITS, "spares": {"reservation": RESERVATION, "count": 1, "retry_interval": 2}},
    EXPEDITE_POLICY: {**_WAITS, "expedite": {"enabled": True, "max_expedited": 2}},
    PLAIN_POLICY: _WAITS,
}


class RestoreStack(BenchStack):
    """The bench stack on cluster ``lzrestore``, with the spare pool and expedite policies added."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id=run_id, dev=RESTORE_DEV, prometheus_port=RESTORE_PROMETHEUS_PORT)

    @property
    def job_prefix(self) -> str:
        return f"restore-{self.run_id}-"

    @property
    def config_path(self) -> Path:
        return self.layout.root / "restore.yaml"

    def config(self) -> dict[str, Any]:
        """The bench stack's configuration with the restore policies added."""
        cfg = super().config()
        cfg["policies"] = {**cfg["policies"], **RESTORE_POLICIES}
        return cfg
