"""How much a node should worry about each NVIDIA Xid code, derived from the signature catalogue.

The catalogue (``lazarus/detection/signatures.yaml``, see :mod:`lazarus.detection.xids`)
is the only table of what an Xid means: its name, NVIDIA's resolution bucket,
its category and whether it blames the node. The agent's class follows from
that, so the node agent and the log attribution always agree:

- FATAL: the node is excluded now (the log attribution restarts the job without
  it): fallen off the bus, double-bit ECC, NVLink, GSP, GPU reset required, ...
- DEGRADING: a hardware warning that blames the node but keeps it: a pending
  row remap, a high single-bit ECC rate, a contained ECC error, an Xid the
  catalogue does not list (worth a look, not a drain).
- NO_NODE_FAULT: the application's fault, a transient driver event that only
  needs the application restarted, or a consequence of another fault.
- RECOVERY_ACTION: Xid 154; the recovery action the driver reports (read from
  NVML alongside) decides, not the code.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache

from lazarus.detection.catalogue import XidMeaning, default_catalogue
from lazarus.detection.xids import ResolutionBucket


class XidClass(StrEnum):
    FATAL = "fatal"
    DEGRADING = "degrading"
    NO_NODE_FAULT = "no_node_fault"
    RECOVERY_ACTION = "recovery_action"


@cache
def xid_meaning(code: int) -> XidMeaning:
    """The catalogue's meaning of ``code`` (any code: unlisted ones get the catalogue's fallback)."""
    return default_catalogue().xid(code)


def classify_xid(code: int) -> XidClass:
    meaning = xid_meaning(code)
    if meaning.bucket is ResolutionBucket.RECOVERY_ACTION:
        return XidClass.RECOVERY_ACTION
    if meaning.excludes_node:
        return XidClass.FATAL
    if meaning.blames_node:
        return XidClass.DEGRADING
    return XidClass.NO_NODE_FAULT


def describe_xid(code: int) -> str:
    """``"Xid 79 (GPU has fallen off the bus)"``; codes without a short meaning get just the number."""
    name = xid_meaning(code).name
    return f"Xid {code} ({name})" if name else f"Xid {code}"


__all__ = ["XidClass", "classify_xid", "describe_xid", "xid_meaning"]
