"""One GPU's health counters from NVML, each call guarded on its own.

A call that fails (NotSupported, FunctionNotFound in an old driver,
NoPermission, ...) leaves its field ``None`` and records why in
``unknown_fields``; ``GPU_IS_LOST`` also marks the GPU lost. Nothing here
raises for a single field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pynvml

from lazarus.health.models import (
    RECOVERY_ACTION_CODES,
    EccCounts,
    GpuHealth,
    NvlinkErrors,
    RecoveryAction,
    RetiredPages,
    RowRemap,
)

T = TypeVar("T")

_NVLINK_COUNTERS = {
    "crc_flit": pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT,
    "crc_data": pynvml.NVML_NVLINK_ERROR_DL_CRC_DATA,
    "replay": pynvml.NVML_NVLINK_ERROR_DL_REPLAY,
    "recovery": pynvml.NVML_NVLINK_ERROR_DL_RECOVERY,
}


class _Probe:
    """Calls NVML for one GPU, turning each failed call into an unknown field."""

    def __init__(self) -> None:
        self.unknown: dict[str, str] = {}
        self.lost = False

    def get(self, field: str, fn: Callable[..., T], *args: Any) -> T | None:
        try:
            return fn(*args)
        except pynvml.NVMLError as exc:
            if exc.value == pynvml.NVML_ERROR_GPU_IS_LOST:
                self.lost = True
            self.unknown[field] = str(exc)
            return None


def read_gpu(index: int, handle: Any, uuid: str, unknown: dict[str, str]) -> GpuHealth:
    """Every counter of one GPU; ``unknown`` holds fields already known to be unreadable."""
    p = _Probe()
    p.unknown.update(unknown)
    return GpuHealth(
        index=index,
        uuid=uuid,
        name=p.get("name", pynvml.nvmlDeviceGetName, handle),
        ecc=_read_ecc(p, handle),
        retired_pages=_read_retired_pages(p, handle),
        row_remap=_read_row_remap(p, handle),
        nvlink=_read_nvlink(p, handle),
        clock_event_reasons=p.get("clock_event_reasons", pynvml.nvmlDeviceGetCurrentClocksEventReasons, handle),
        recovery_action=_read_recovery_action(p, handle),
        lost=p.lost,
        unknown_fields=p.unknown,
    )


def _read_ecc(p: _Probe, h: Any) -> EccCounts:
    def total(field: str, error_type: int, counter: int) -> int | None:
        return p.get(field, pynvml.nvmlDeviceGetTotalEccErrors, h, error_type, counter)

    corrected, uncorrected = pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    return EccCounts(
        sbe_volatile=total("ecc.sbe_volatile", corrected, pynvml.NVML_VOLATILE_ECC),
        dbe_volatile=total("ecc.dbe_volatile", uncorrected, pynvml.NVML_VOLATILE_ECC),
        sbe_aggregate=total("ecc.sbe_aggregate", corrected, pynvml.NVML_AGGREGATE_ECC),
        dbe_aggregate=total("ecc.dbe_aggregate", uncorrected, pynvml.NVML_AGGREGATE_ECC),
    )


def _read_retired_pages(p: _Probe, h: Any) -> RetiredPages:
    sbe = p.get("retired_pages.sbe", pynvml.nvmlDeviceGetRetiredPages, h,
                pynvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)  # fmt: skip
    dbe = p.get("retired_pages.dbe", pynvml.nvmlDeviceGetRetiredPages, h,
                pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)  # fmt: skip
    pending = p.get("retired_pages.pending", pynvml.nvmlDeviceGetRetiredPagesPendingStatus, h)
    return RetiredPages(
        sbe=None if sbe is None else len(sbe),
        dbe=None if dbe is None else len(dbe),
        pending=None if pending is None else bool(pending),
    )


def _read_row_remap(p: _Probe, h: Any) -> RowRemap:
    rows = p.get("row_remap", pynvml.nvmlDeviceGetRemappedRows, h)
    if rows is None:
        return RowRemap()
    corr, unc, pending, failure = rows
    return RowRemap(correctable=corr, uncorrectable=unc, pending=bool(pending), failure=bool(failure))


def _read_nvlink(p: _Probe, h: Any) -> list[NvlinkErrors] | None:
    """Counters of every active link; None when the GPU has no readable NVLink at all."""
    links: list[NvlinkErrors] = []
    for link in range(pynvml.NVML_NVLINK_MAX_LINKS):
        try:
            active = pynvml.nvmlDeviceGetNvLinkState(h, link)
        except pynvml.NVMLError as exc:
            if link == 0:
                p.unknown["nvlink"] = str(exc)
                return None
            break  # InvalidArgument past the GPU's last link
        if active:
            counters = {
                name: p.get(f"nvlink.{link}.{name}", pynvml.nvmlDeviceGetNvLinkErrorCounter, h, link, counter)
                for name, counter in _NVLINK_COUNTERS.items()
            }
            links.append(NvlinkErrors(link=link, **counters))
    return links


def _read_recovery_action(p: _Probe, h: Any) -> RecoveryAction | None:
    """The driver's recommendation, from field value 230 (newer drivers only)."""
    values = p.get("recovery_action", pynvml.nvmlDeviceGetFieldValues, h,
                   [pynvml.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION])  # fmt: skip
    if values is None:
        return None
    value = values[0]
    if value.nvmlReturn != pynvml.NVML_SUCCESS:
        p.unknown["recovery_action"] = str(pynvml.NVMLError(value.nvmlReturn))
        return None
    code = int(value.value.ullVal)
    if code >= len(RECOVERY_ACTION_CODES):
        p.unknown["recovery_action"] = f"unrecognised recovery action code {code}"
        return None
    return RECOVERY_ACTION_CODES[code]
