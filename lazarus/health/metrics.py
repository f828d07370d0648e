"""Prometheus metrics for the node agent, with DCGM-exporter names where they exist.

Dashboards and alert rules written for NVIDIA's dcgm-exporter work unchanged on
the DCGM names (same labels ``gpu``, ``UUID``, ``Hostname``, ``modelName``). DCGM
exports counters such as ``DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`` without a ``_total``
suffix, so they are exposed as gauges here to keep the exact names. A field NVML
could not read has no sample at all (Prometheus's way of saying "unknown") and
appears in ``lazarus_gpu_field_unknown`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from lazarus.health.agent import NodeAgent
from lazarus.health.models import RECOVERY_ACTION_CODES, GpuHealth

GPU_LABELS = ["gpu", "UUID", "Hostname", "modelName"]


def _nvlink_sum(name: str) -> Callable[[GpuHealth], float | None]:
    def total(g: GpuHealth) -> float | None:
        if g.nvlink is None:
            return None
        values = [getattr(link, name) for link in g.nvlink]
        return None if values and all(v is None for v in values) else float(sum(v or 0 for v in values))

    return total


def _flag(value: bool | None) -> float | None:
    return None if value is None else float(value)


def _last_xid(g: GpuHealth) -> float:
    return float(g.xid_events[-1].xid) if g.xid_events else 0.0


# (metric name, help, value of one GPU or None when unknown)
GPU_METRICS: list[tuple[str, str, Callable[[GpuHealth], float | None]]] = [
    ("DCGM_FI_DEV_XID_ERRORS", "Value of the last Xid error seen within the agent's Xid window (0: none).", _last_xid),
    ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Single-bit volatile ECC errors.", lambda g: g.ecc.sbe_volatile),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Double-bit volatile ECC errors.", lambda g: g.ecc.dbe_volatile),
    ("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "Single-bit persistent ECC errors.", lambda g: g.ecc.sbe_aggregate),
    ("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "Double-bit persistent ECC errors.", lambda g: g.ecc.dbe_aggregate),
    ("DCGM_FI_DEV_RETIRED_SBE", "Pages retired after multiple single-bit errors.", lambda g: g.retired_pages.sbe),
    ("DCGM_FI_DEV_RETIRED_DBE", "Pages retired after double-bit errors.", lambda g: g.retired_pages.dbe),
    ("DCGM_FI_DEV_RETIRED_PENDING", "1 when a page retirement is pending.", lambda g: _flag(g.retired_pages.pending)),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "Rows remapped for correctable errors.",
     lambda g: g.row_remap.correctable),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "Rows remapped for uncorrectable errors.",
     lambda g: g.row_remap.uncorrectable),
    ("DCGM_FI_DEV_ROW_REMAP_PENDING", "1 when a row remap waits for a GPU reset.",
     lambda g: _flag(g.row_remap.pending)),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "1 when row remapping failed.", lambda g: _flag(g.row_remap.failure)),
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "NVLink flow-control CRC errors, all links.",
     _nvlink_sum("crc_flit")),
    ("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "NVLink data CRC errors, all links.", _nvlink_sum("crc_data")),
    ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "NVLink replay errors, all links.", _nvlink_sum("replay")),
    ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "NVLink recovery errors, all links.", _nvlink_sum("recovery")),
    ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock event (throttle) reasons bitmask.",
     lambda g: g.clock_event_reasons),
    ("lazarus_gpu_recovery_action", "Driver-recommended recovery action (NVML code: 0 none, 1 GPU reset, "
     "2 node reboot, 3 drain P2P, 4 drain and reset, 5 recover IMEX domain, 6 bus reset, 7 system reboot).",
     lambda g: None if g.recovery_action is None else RECOVERY_ACTION_CODES.index(g.recovery_action)),
    ("lazarus_gpu_lost", "1 when NVML reports the GPU as lost.", lambda g: float(g.lost)),
    ("lazarus_gpu_health", "GPU verdict: 0 healthy, 1 degraded, 2 failed.", lambda g: g.verdict.level),
]  # fmt: skip


class HealthCollector(Collector):
    """Renders the agent's latest snapshot at scrape time (no state of its own)."""

    def __init__(self, agent: NodeAgent) -> None:
        self.agent = agent

    def collect(self) -> Iterator[Metric]:
        health, host = self.agent.latest, self.agent.node
        yield _single("lazarus_node_agent_poll_errors", "NVML polls that failed.", host, self.agent.poll_errors,
                      counter=True)  # fmt: skip
        if health is None:
            return
        yield _single("lazarus_node_health", "Node verdict: 0 healthy, 1 degraded, 2 failed.", host,
                      health.verdict.level)  # fmt: skip
        yield _single("lazarus_node_gpus", "GPUs NVML enumerates.", host, health.gpu_count)
        yield _single("lazarus_node_agent_last_poll_timestamp_seconds", "Time of the latest NVML reading.", host,
                      health.time.timestamp())  # fmt: skip
        for name, doc, value_of in GPU_METRICS:
            family = GaugeMetricFamily(name, doc, labels=GPU_LABELS)
            for g in health.gpus:
                value = value_of(g)
                if value is not None:
                    family.add_metric(_gpu_labels(g, host), float(value))
            yield family
        yield from self._unknown_and_xids(health.gpus, host)

    def _unknown_and_xids(self, gpus: list[GpuHealth], host: str) -> Iterator[Metric]:
        unknown = GaugeMetricFamily(
            "lazarus_gpu_field_unknown", "1 for each field NVML could not read on this GPU.",
            labels=[*GPU_LABELS, "field"],
        )  # fmt: skip
        for g in gpus:
            for field in g.unknown_fields:
                unknown.add_metric([*_gpu_labels(g, host), field], 1.0)
        yield unknown
        xids = CounterMetricFamily(
            "lazarus_xid_events", "Xid events received since the agent started.",
            labels=["gpu", "UUID", "Hostname", "xid"],
        )  # fmt: skip
        for (gpu, uuid, xid), count in self.agent.xid_totals:
            xids.add_metric([str(gpu), uuid, host, str(xid)], float(count))
        yield xids


def _gpu_labels(g: GpuHealth, host: str) -> list[str]:
    return [str(g.index), g.uuid, host, g.name or ""]


def _single(name: str, doc: str, host: str, value: float, counter: bool = False) -> Metric:
    family = (CounterMetricFamily if counter else GaugeMetricFamily)(name, doc, labels=["Hostname"])
    family.add_metric([host], float(value))
    return family


def build_registry(agent: NodeAgent) -> CollectorRegistry:
    """A registry with only the health collector: the agent's own process metrics are not node health."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(HealthCollector(agent))
    return registry


__all__ = ["GPU_METRICS", "HealthCollector", "build_registry"]
