"""Typed snapshots of one node's GPU health, as the node agent reads them from NVML.

A field that NVML could not answer (the GPU or driver does not support it, no
permission, ...) is ``None`` and named in ``unknown_fields`` with the reason, so
"not supported" is never confused with "zero errors". ``verdict`` and
``reasons`` are derived by :mod:`lazarus.health.assess`; they are stored fields
(not computed) so a snapshot printed with ``--json`` parses back unchanged.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Verdict(StrEnum):
    HEALTHY = "healthy"
    DEGRADED = "degraded"
    FAILED = "failed"

    @property
    def level(self) -> int:
        """0/1/2, the value of the ``lazarus_node_health`` metric."""
        return _LEVELS[self]


_LEVELS = {Verdict.HEALTHY: 0, Verdict.DEGRADED: 1, Verdict.FAILED: 2}


class RecoveryAction(StrEnum):
    """The driver's recommended recovery action (``NVML_FI_DEV_GET_GPU_RECOVERY_ACTION``)."""

    NONE = "none"
    GPU_RESET = "gpu_reset"
    NODE_REBOOT = "node_reboot"
    DRAIN_P2P = "drain_p2p"
    DRAIN_AND_RESET = "drain_and_reset"
    RECOVER_IMEX_DOMAIN = "recover_imex_domain"
    BUS_RESET = "bus_reset"
    SYSTEM_REBOOT = "system_reboot"


# NVML's numeric codes, in order (NVML_GPU_RECOVERY_ACTION_NONE = 0 ... SYSTEM_REBOOT = 7).
RECOVERY_ACTION_CODES: tuple[RecoveryAction, ...] = tuple(RecoveryAction)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class XidEvent(_Model):
    """One ``nvmlEventTypeXidCriticalError`` event."""

    gpu: int = Field(ge=0, description="NVML device index")
    uuid: str
    xid: int = Field(ge=0)
    time: datetime = Field(description="when the agent received the event (NVML carries no timestamp)")


class EccCounts(_Model):
    """Total ECC error counts. Volatile counts reset at driver reload; aggregate counts persist."""

    sbe_volatile: int | None = None
    dbe_volatile: int | None = None
    sbe_aggregate: int | None = None
    dbe_aggregate: int | None = None


class RetiredPages(_Model):
    """Dynamic page retirement (GPUs before Ampere)."""

    sbe: int | None = Field(None, description="pages retired after multiple single-bit errors")
    dbe: int | None = Field(None, description="pages retired after a double-bit error")
    pending: bool | None = Field(None, description="a retirement waits for the next driver reload")


class RowRemap(_Model):
    """Row remapping (Ampere and later): pending needs a GPU reset; failure means the GPU needs service."""

    correctable: int | None = None
    uncorrectable: int | None = None
    pending: bool | None = None
    failure: bool | None = None


class NvlinkErrors(_Model):
    """Error counters of one active NVLink (since the driver loaded or the counters were reset)."""

    link: int = Field(ge=0)
    crc_flit: int | None = None
    crc_data: int | None = None
    replay: int | None = None
    recovery: int | None = None

    def total(self) -> int:
        return sum(v or 0 for v in (self.crc_flit, self.crc_data, self.replay, self.recovery))


class GpuHealth(_Model):
    index: int = Field(ge=0)
    uuid: str
    name: str | None = None
    lost: bool = Field(False, description="NVML reports the GPU as lost (fallen off the bus)")
    ecc: EccCounts = EccCounts()
    retired_pages: RetiredPages = RetiredPages()
    row_remap: RowRemap = RowRemap()
    nvlink: list[NvlinkErrors] | None = Field(None, description="None when NVLink is unsupported or unreadable")
    clock_event_reasons: int | None = Field(None, description="nvmlClocksEventReason* bitmask")
    recovery_action: RecoveryAction | None = None
    xid_events: list[XidEvent] = Field(default_factory=list, description="Xids seen within the agent's window")
    unknown_fields: dict[str, str] = Field(default_factory=dict, description="field -> why NVML gave no value")
    verdict: Verdict = Verdict.HEALTHY
    reasons: list[str] = Field(default_factory=list)


class NodeHealth(_Model):
    node: str
    time: datetime
    driver_version: str | None = None
    gpu_count: int = Field(ge=0, description="GPUs NVML enumerates")
    expected_gpus: int | None = Field(None, description="GPUs the node should have (operator setting)")
    gpus: list[GpuHealth] = Field(default_factory=list)
    verdict: Verdict = Verdict.HEALTHY
    reasons: list[str] = Field(default_factory=list)
    xid_codes: list[int] = Field(default_factory=list, description="distinct Xid codes seen, ascending")
