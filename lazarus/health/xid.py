"""How much a node should worry about each NVIDIA Xid code.

Grounded in NVIDIA's Xid catalogue "immediate action" buckets (via NVSentinel's
mapping) and Meta's critical list, summarised in the project's peer notes:

- FATAL: the GPU needs a reset, reboot or service; jobs on it will fail again
  (fallen off the bus, double-bit ECC, NVLink, GSP, row-remap failure, ...).
- DEGRADING: the GPU still works but is wearing out or needs a reset at the
  next opportunity (pending row remap, excessive single-bit ECC rate, ...).
- APPLICATION: usually raised by the faulting program itself (illegal access,
  page fault) or a cascade after another fault; not a node problem on its own.

Codes not listed are treated as DEGRADING: an unknown Xid is worth a look
but not a drain.
"""

from __future__ import annotations

from enum import StrEnum


class XidClass(StrEnum):
    FATAL = "fatal"
    DEGRADING = "degrading"
    APPLICATION = "application"


_FATAL = frozenset(
    {46, 48, 54, 61, 62, 64, 74, 79, 95, 119, 120, 136, 140, 143, 155, 156, 158}
    | set(range(144, 151))  # NVLink5 / NVSwitch domain errors (Blackwell)
)
_DEGRADING = frozenset({63, 92, 94})
# 109 (context-switch timeout) is disputed between sources; it is usually app-induced, so it starts here.
_APPLICATION = frozenset({8, 13, 31, 43, 45, 68, 69, 109})

_MEANING = {
    8: "GPU stopped processing",
    13: "graphics engine exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing after an application fault",
    45: "preemptive cleanup after another fault",
    46: "GPU timeout",
    48: "double-bit ECC error",
    54: "power-reduced clocking",
    61: "PMU breakpoint",
    62: "PMU halt",
    63: "row remap / page retirement recorded, reset to activate",
    64: "row remap / page retirement failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "excessive single-bit ECC rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
    109: "context-switch timeout",
    119: "GSP RPC timeout",
    120: "GSP error",
}


def classify_xid(code: int) -> XidClass:
    if code in _FATAL:
        return XidClass.FATAL
    if code in _APPLICATION:
        return XidClass.APPLICATION
    return XidClass.DEGRADING


def describe_xid(code: int) -> str:
    """``"Xid 79 (GPU has fallen off the bus)"``; codes without a short meaning get just the number."""
    meaning = _MEANING.get(code)
    return f"Xid {code} ({meaning})" if meaning else f"Xid {code}"


__all__ = ["XidClass", "classify_xid", "describe_xid"]
