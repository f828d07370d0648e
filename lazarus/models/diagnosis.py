"""The diagnosis contract shared by `lazarus diagnose`, telemetry and the recovery workflow.

`lazarus diagnose FILE... --json` prints exactly :class:`Diagnosis` (see docs/design contract).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

MAX_OUTSIDE_NAMED = 8  # nodes outside an allocation named in a note; the rest are counted


def within_allocation(nodes: Iterable[str], allocation: Collection[str]) -> tuple[list[str], list[str]]:
    """``nodes`` split into those of ``allocation`` (order kept, no duplicates, never more than the
    allocation holds) and the others (no duplicates, at most ``MAX_OUTSIDE_NAMED + 1`` kept: enough to
    say there were more). Reads ``nodes`` only as far as needed."""
    allowed = set(allocation)
    kept: list[str] = []
    outside: list[str] = []
    for node in nodes:
        if node in allowed:
            if node not in kept:
                kept.append(node)
        elif node not in outside and len(outside) <= MAX_OUTSIDE_NAMED:
            outside.append(node)
        if len(kept) >= len(allowed) and len(outside) > MAX_OUTSIDE_NAMED:
            break
    return kept, outside


def outside_note(outside: list[str], source: str) -> str:
    """The record's words for nodes set aside because they are outside the attempt's allocation."""
    shown = ", ".join(outside[:MAX_OUTSIDE_NAMED]) + (" and more" if len(outside) > MAX_OUTSIDE_NAMED else "")
    return f"{source} named node(s) outside the job's allocation ({shown}); ignored"


NODE_LOST_SIGNATURE = "node-lost"  # a node whose agent fell silent under a stalled job (lazarus/telemetry/liveness.py)


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


class EvidenceSource(StrEnum):
    """Where a diagnosis's implicated nodes come from. A job's own output (its log lines, its metrics) can by
    itself only exclude nodes from that job; draining a node for everyone needs evidence from outside the job."""

    JOB_OUTPUT = "job_output"
    NODE_AGENT = "node_agent"
    SCHEDULER = "scheduler"


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
    implicated_by: EvidenceSource = Field(
        EvidenceSource.JOB_OUTPUT,
        description="where the implicated nodes come from: the job's own output, the node agents, or the scheduler",
    )
    confidence: float = Field(0.0, ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)
    explanation: str = Field("", description="one-paragraph human summary")
    notes: list[str] = Field(default_factory=list, description="problems reading input, degraded sources, ...")

    def bound_to_allocation(self, allocation: Collection[str], source: str = "the diagnosis") -> Diagnosis:
        """This diagnosis with only the implicated nodes of the attempt's ``allocation`` (so never more than
        it holds); any other is dropped and the drop noted. A job's output, its metrics or an external
        provider can implicate only the job's own nodes."""
        kept, outside = within_allocation(self.implicated_nodes, allocation)
        if not outside and len(kept) == len(self.implicated_nodes):
            return self
        notes = [*self.notes, outside_note(outside, source)] if outside else self.notes
        return self.model_copy(update={"implicated_nodes": kept, "notes": notes})
