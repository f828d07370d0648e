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
from datetime import datetime
from pathlib import Path
from typing import Any

import pynvml
from loguru import logger

from lazarus.errors import LazarusError
from lazarus.health.models import GpuHealth, XidEvent
from lazarus.health.nvml_fields import read_gpu

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

    def __enter__(self) -> NvmlReader:
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
        gpus = []
        for index, handle, uuid in self._handles:
            unknown = {"xid_events": self._events_unknown[index]} if index in self._events_unknown else {}
            gpus.append(read_gpu(index, handle, uuid, unknown))
        return gpus

    def drain_xid_events(self, now: datetime) -> list[XidEvent]:
        """Every Xid event pending in the event set, without waiting for new ones."""
        if self._event_set is None:
            return []
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
            gpu = self._event_gpu(data)
            if gpu is None:
                logger.error("Xid {} from a device NVML did not enumerate; it cannot be attributed", data.eventData)
                continue
            events.append(XidEvent(gpu=gpu[0], uuid=gpu[1], xid=int(data.eventData), time=now))
        return events

    def _event_gpu(self, data: Any) -> tuple[int, str] | None:
        """(index, uuid) of the event's device: by handle, which NVML hands back unchanged, else by UUID."""
        address = ctypes.cast(data.device, ctypes.c_void_p).value
        for index, handle, uuid in self._handles:
            if ctypes.cast(handle, ctypes.c_void_p).value == address:
                return index, uuid
        uuid = _event_uuid(data)
        return next(((i, u) for i, _, u in self._handles if u == uuid), None)


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
