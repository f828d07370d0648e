"""The diagnosis contract shared by `lazarus diagnose`, telemetry and the recovery workflow.

`lazarus diagnose FILE... --json` prints exactly :class:`Diagnosis` (see docs/design contract).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class FailureKind(StrEnum):
    CRASH = "crash"
    HANG = "hang"
    STRAGGLER = "straggler"
    NONE = "none"


class Category(StrEnum):
    HARDWARE = "hardware"
    SYSTEM_SOFTWARE = "system_software"
    INFRASTRUCTURE = "infrastructure"
    APPLICATION = "application"
    UNKNOWN = "unknown"


class RetryAdvice(StrEnum):
    RETRY_SAME_NODES = "retry_same_nodes"
    RETRY_EXCLUDING_NODES = "retry_excluding_nodes"
    STOP = "stop"


class Evidence(BaseModel):
    """One log line that supports a diagnosis."""

    model_config = ConfigDict(extra="forbid")

    file: str
    line_no: int = Field(ge=0, description="1-based line number; 0 when not from a file")
    text: str = Field(description="the line, shortened to at most 500 characters")
    rule: str = Field(description="signature id that matched")


class Diagnosis(BaseModel):
    """What went wrong, where, and what to do about it."""

    model_config = ConfigDict(extra="forbid")

    failure_kind: FailureKind = FailureKind.NONE
    category: Category = Category.UNKNOWN
    signature: str | None = Field(None, description="id of the root-cause signature")
    retry_advice: RetryAdvice | None = Field(None, description="None when there is nothing to recover")
    implicated_nodes: list[str] = Field(default_factory=list)
    confidence: float = Field(0.0, ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)
    explanation: str = Field("", description="one-paragraph human summary")
    notes: list[str] = Field(default_factory=list, description="problems reading input, degraded sources, ...")
