"""The Xid part of the signature catalogue: NVIDIA's code, a short name and NVIDIA's resolution bucket.

An Xid signature in ``signatures.yaml`` lists the codes it stands for under
``xids``; with the signature's own category, role and retry advice that is
everything Lazarus knows about a code, in one place. The node agent's Xid
classes (:mod:`lazarus.health.xid`) are derived from it.

The buckets are the "Resolution Bucket (Immediate Action)" column of NVIDIA's
Xid catalogue (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html),
as also encoded in NVIDIA NVSentinel's ``xiderrorsmapping.csv``. Only the buckets
of codes the catalogue lists are here.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class ResolutionBucket(StrEnum):
    """NVIDIA's immediate action for an Xid."""

    RESTART_APP = "RESTART_APP"  # restart the application; the GPU is fine
    RESET_GPU = "RESET_GPU"  # reset the GPU before it runs anything again
    RESTART_BM = "RESTART_BM"  # reboot the (bare-metal) node
    CONTACT_SUPPORT = "CONTACT_SUPPORT"  # unexpected error: report it (NVSentinel: UNEXPECTED_ERR_REPORT_ISSUE)
    CHECK_MECHANICALS = "CHECK_MECHANICALS"  # check power and cooling by hand
    IGNORE = "IGNORE"  # informational; no immediate action
    WORKFLOW_XID_45 = "WORKFLOW_XID_45"  # follow the Xid 45 workflow (find the error it cleaned up after)
    WORKFLOW_XID_48 = "WORKFLOW_XID_48"  # follow the double-bit ECC workflow (row remap, reset)
    WORKFLOW_NVLINK_ERR = "WORKFLOW_NVLINK_ERR"  # follow the NVLink error workflow
    WORKFLOW_NVLINK5_ERR = "WORKFLOW_NVLINK5_ERR"  # follow the NVLink5 (Blackwell) error workflow
    RECOVERY_ACTION = "RECOVERY_ACTION"  # Xid 154: do what the recovery action in the message says


class XidCode(BaseModel):
    """One NVIDIA Xid code as the catalogue lists it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: int = Field(ge=0)
    name: str = Field(min_length=1, description="short meaning, e.g. 'GPU has fallen off the bus'")
    bucket: ResolutionBucket
