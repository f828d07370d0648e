"""Read GPU health through NVML (pynvml, from the nvidia-ml-py package).

Every NVML call is guarded on its own: ``NVMLError_NotSupported``, missing
functions in an old driver, no permission and friends make that one field
unknown (recorded with the reason) and never stop the read. A GPU that
answers ``GPU_IS_LOST`` is marked lost. Only a failure to initialise NVML at
all is an error, :class:`NvmlUnavailableError`, with one clear sentence.

Xid events arrive through an NVML event set registered for
``nvmlEventTypeXidCriticalError``; :meth:`NvmlReader.drain_xid_events` waits
with a zero timeout, so it never blocks the agent's poll loop.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import pynvml
from loguru import logger

from lazarus.errors import LazarusError
from lazarus.health.models import (
    RECOVERY_ACTION_CODES,
    EccCounts,
    GpuHealth,
    NvlinkErrors,
    RecoveryAction,
    RetiredPages,
    RowRemap,
    XidEvent,
)

T = TypeVar("T")

_NVLINK_COUNTERS = {
    "crc_flit": pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT,
    "crc_data": pynvml.NVML_NVLINK_ERROR_DL_CRC_DATA,
    "replay": pynvml.NVML_NVLINK_ERROR_DL_REPLAY,
    "recovery": pynvml.NVML_NVLINK_ERROR_DL_RECOVERY,
}
_MAX_EVENTS_PER_DRAIN = 1024


class NvmlUnavailableError(LazarusError):
    """NVML cannot be initialised on this machine (no library, no driver, no permission)."""

    exit_code = 3


def _unavailable(detail: str) -> NvmlUnavailableError:
    return NvmlUnavailableError(f"NVML not available: {detail}; is the NVIDIA driver installed?")


def _load_library(path: Path) -> None:
    """Hand pynvml an explicit library file.

    pynvml only ever loads ``libnvidia-ml.so.1`` by soname, resolved when the
    process starts (LD_LIBRARY_PATH). A driver installed elsewhere (a container
    mount, a test build) can only be used by loading it ourselves and installing
    it as pynvml's library before ``nvmlInit``.
    """
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise _unavailable(f"cannot load {path} ({exc})") from None
    with pynvml.libLoadLock:
        pynvml.nvmlLib = lib
        pynvml._nvmlGetFunctionPointer_cache.clear()


def _init(library: Path | None) -> None:
    if library is not None:
        _load_library(library)
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        raise _unavailable("libnvidia-ml.so.1 was not found") from None
    except pynvml.NVMLError_DriverNotLoaded:
        raise _unavailable("the NVIDIA kernel driver is not loaded") from None
    except pynvml.NVMLError as exc:
        raise _unavailable(f"nvmlInit failed ({exc})") from None


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


class NvmlReader:
    """An open NVML session: the GPUs' handles and an Xid event set. Use as a context manager."""

    def __init__(self, library: Path | None = None) -> None:
        _init(library)
        self.driver_version = self._driver_version()
        self._handles: list[tuple[int, Any, str]] = []  # (index, handle, uuid)
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self._handles.append((index, handle, _uuid(index, handle)))
        self._event_set: Any = None
        self._events_unknown: dict[int, str] = {}
        self._register_xid_events()

    def __enter__(self) -> "NvmlReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Free the event set and shut NVML down; safe to call twice."""
        if self._event_set is not None:
            try:
                pynvml.nvmlEventSetFree(self._event_set)
            except pynvml.NVMLError as exc:
                logger.warning("freeing the NVML event set failed: {}", exc)
            self._event_set = None
        if self._handles is not None:
            try:
                pynvml.nvmlShutdown()
            except pynvml.NVMLError as exc:
                logger.warning("nvmlShutdown failed: {}", exc)
            self._handles = None  # type: ignore[assignment]

    def _driver_version(self) -> str | None:
        try:
            return str(pynvml.nvmlSystemGetDriverVersion())
        except pynvml.NVMLError:
            return None

    def _register_xid_events(self) -> None:
        try:
            self._event_set = pynvml.nvmlEventSetCreate()
        except pynvml.NVMLError as exc:
            self._events_unknown = {i: f"event set: {exc}" for i, _, _ in self._handles}
            return
        for index, handle, _ in self._handles:
            try:
                supported = pynvml.nvmlDeviceGetSupportedEventTypes(handle)
                if not supported & pynvml.nvmlEventTypeXidCriticalError:
                    self._events_unknown[index] = "Xid events not supported"
                    continue
                pynvml.nvmlDeviceRegisterEvents(handle, pynvml.nvmlEventTypeXidCriticalError, self._event_set)
            except pynvml.NVMLError as exc:
                self._events_unknown[index] = str(exc)

    def read_gpus(self) -> list[GpuHealth]:
        """One reading of every GPU's counters (Xid events are collected separately)."""
        return [self._read_gpu(index, handle, uuid) for index, handle, uuid in self._handles]

    def _read_gpu(self, index: int, handle: Any, uuid: str) -> GpuHealth:
        p = _Probe()
        if index in self._events_unknown:
            p.unknown["xid_events"] = self._events_unknown[index]
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

    def drain_xid_events(self, now: datetime) -> list[XidEvent]:
        """Every Xid event pending in the event set, without waiting for new ones."""
        if self._event_set is None:
            return []
        by_uuid = {uuid: index for index, _, uuid in self._handles}
        events: list[XidEvent] = []
        for _ in range(_MAX_EVENTS_PER_DRAIN):
            try:
                data = pynvml.nvmlEventSetWait_v2(self._event_set, 0)
            except pynvml.NVMLError_Timeout:
                break
            except pynvml.NVMLError as exc:
                logger.warning("waiting for NVML events failed: {}", exc)
                break
            if not data.eventType & pynvml.nvmlEventTypeXidCriticalError:
                continue
            uuid = _event_uuid(data)
            events.append(XidEvent(gpu=by_uuid.get(uuid, 0), uuid=uuid, xid=int(data.eventData), time=now))
        return events


def _uuid(index: int, handle: Any) -> str:
    try:
        return str(pynvml.nvmlDeviceGetUUID(handle))
    except pynvml.NVMLError:
        return f"GPU-index-{index}"  # a lost GPU may not answer; the index still names it


def _event_uuid(data: Any) -> str:
    try:
        return str(pynvml.nvmlDeviceGetUUID(data.device))
    except pynvml.NVMLError:
        return "GPU-unknown"


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
