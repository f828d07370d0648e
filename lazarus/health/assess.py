"""Derive healthy / degraded / failed verdicts from raw GPU readings.

``failed`` means jobs should not run on the node until it is serviced (the
attribution engine may exclude or drain it); ``degraded`` means it still works
but needs attention soon or may slow a job down (a straggler suspect);
``healthy`` means nothing in NVML argues against it. Unknown fields never make
a GPU worse: a node must not be drained because its driver is old.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

from lazarus.health.models import GpuHealth, NodeHealth, RecoveryAction, Verdict, XidEvent
from lazarus.health.xid import XidClass, classify_xid, describe_xid

# Clock event reasons that mean the hardware is slowing itself down. Idle, application
# clocks, sync boost and the software power cap are normal operation and are ignored.
_SLOWDOWN_BITS = {
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake slowdown",
}

_FAILING_ACTIONS = {
    RecoveryAction.GPU_RESET,
    RecoveryAction.NODE_REBOOT,
    RecoveryAction.DRAIN_AND_RESET,
    RecoveryAction.BUS_RESET,
    RecoveryAction.SYSTEM_REBOOT,
}


class HealthThresholds(BaseModel):
    """Operator-tunable limits for the verdict."""

    model_config = ConfigDict(extra="forbid")

    xid_window: timedelta = Field(timedelta(hours=1), description="Xids older than this no longer count")
    nvlink_errors_degraded: int = Field(
        1, ge=1, description="total NVLink error count on one link at which the GPU is degraded"
    )


def assess_gpu(gpu: GpuHealth, now: datetime, limits: HealthThresholds) -> GpuHealth:
    """Return ``gpu`` with its verdict, reasons and only the Xids still inside the window."""
    recent = [e for e in gpu.xid_events if now - e.time <= limits.xid_window]
    failed, degraded = _failure_reasons(gpu, recent), _degradation_reasons(gpu, recent, limits)
    verdict = Verdict.FAILED if failed else Verdict.DEGRADED if degraded else Verdict.HEALTHY
    return gpu.model_copy(update={"xid_events": recent, "verdict": verdict, "reasons": failed + degraded})


def _failure_reasons(gpu: GpuHealth, xids: list[XidEvent]) -> list[str]:
    reasons = []
    if gpu.lost:
        reasons.append("NVML reports the GPU as lost (fallen off the bus)")
    if gpu.ecc.dbe_volatile:
        reasons.append(f"{gpu.ecc.dbe_volatile} uncorrectable (double-bit) ECC errors since the driver loaded")
    if gpu.row_remap.failure:
        reasons.append("row remapping failed: the GPU needs service")
    if gpu.recovery_action in _FAILING_ACTIONS:
        reasons.append(f"the driver recommends recovery action {gpu.recovery_action.value}")
    for code in sorted({e.xid for e in xids if classify_xid(e.xid) is XidClass.FATAL}):
        reasons.append(f"{describe_xid(code)}: fatal for the GPU")
    return reasons


def _degradation_reasons(gpu: GpuHealth, xids: list[XidEvent], limits: HealthThresholds) -> list[str]:
    reasons = []
    if gpu.row_remap.pending:
        reasons.append("a row remap is pending: reset the GPU to activate it")
    if gpu.retired_pages.pending:
        reasons.append("a page retirement is pending: reload the driver to activate it")
    if gpu.recovery_action in (RecoveryAction.DRAIN_P2P, RecoveryAction.RECOVER_IMEX_DOMAIN):
        reasons.append(f"the driver recommends recovery action {gpu.recovery_action.value}")
    for code in sorted({e.xid for e in xids if classify_xid(e.xid) is XidClass.DEGRADING}):
        reasons.append(f"{describe_xid(code)}: the GPU is degrading")
    for link in gpu.nvlink or []:
        if link.total() >= limits.nvlink_errors_degraded:
            reasons.append(
                f"NVLink {link.link}: {link.crc_flit or 0} CRC flit, {link.crc_data or 0} CRC data, "
                f"{link.replay or 0} replay, {link.recovery or 0} recovery errors"
            )
    slow = [name for bit, name in _SLOWDOWN_BITS.items() if (gpu.clock_event_reasons or 0) & bit]
    if slow:
        reasons.append("clocks throttled: " + ", ".join(slow))
    return reasons


def assess_node(
    node: str,
    gpus: list[GpuHealth],
    now: datetime,
    limits: HealthThresholds,
    driver_version: str | None = None,
    expected_gpus: int | None = None,
) -> NodeHealth:
    """The node's verdict is its worst GPU's; a GPU missing from enumeration fails the node."""
    assessed = [assess_gpu(g, now, limits) for g in gpus]
    reasons: list[str] = []
    verdict = Verdict.HEALTHY
    if expected_gpus is not None and len(gpus) < expected_gpus:
        reasons.append(
            f"NVML enumerates {len(gpus)} GPUs, {expected_gpus} expected (a GPU may have fallen off the bus)"
        )
        verdict = Verdict.FAILED
    for g in assessed:
        reasons.extend(f"gpu {g.index} ({g.uuid}): {r}" for r in g.reasons)
        if g.verdict.level > verdict.level:
            verdict = g.verdict
    return NodeHealth(
        node=node,
        time=now,
        driver_version=driver_version,
        gpu_count=len(gpus),
        expected_gpus=expected_gpus,
        gpus=assessed,
        verdict=verdict,
        reasons=reasons,
        xid_codes=sorted({e.xid for g in assessed for e in g.xid_events}),
    )
