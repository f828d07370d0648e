"""Typed inputs and findings of the straggler detector.

A :class:`StragglerFinding` converts to the shared :class:`Diagnosis` contract
(``failure_kind=straggler``) so the recovery workflow treats it like any other
anomaly: advice to restart excluding the slow node, acted on only when the
job's policy sets ``act_on_stragglers``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lazarus.models.diagnosis import Category, Diagnosis, Evidence, FailureKind, RetryAdvice

DEFAULT_METRIC = "lazarus_rank_samples_per_second"
RULE_ID = "straggler.throughput_drop"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StragglerThresholds(_Model):
    """When a slowdown counts as a straggler. Defaults follow NVRx (a score below 0.75 of the reference)."""

    drop_fraction: float = Field(0.25, gt=0, lt=1, description="minimum drop against the series' own baseline")
    min_windows: int = Field(3, ge=1, description="the last this-many windows must all be slow")
    min_baseline_windows: int = Field(3, ge=1, description="windows of history needed before judging a series")


class WindowPoint(_Model):
    """Mean throughput of one series over the window ending at ``end``."""

    end: datetime
    value: float = Field(ge=0)


class ThroughputSeries(_Model):
    """One node's (or one rank's) throughput windows within one job, oldest first."""

    job_id: str
    node: str
    rank: str | None = Field(None, description="set when the detector works per rank")
    windows: list[WindowPoint]

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.node, self.rank)


class WindowEvidence(_Model):
    end: datetime
    value: float = Field(description="the series' throughput in this window")
    reference: float | None = Field(description="median of the job's other series in this window; None alone")
    score: float = Field(description="value / reference (or value alone when the series has no peers)")


class StragglerFinding(_Model):
    """One series whose throughput dropped, relative to its peers and to its own history, for long enough."""

    job_id: str
    node: str
    rank: str | None = None
    mode: Literal["relative", "individual"] = Field(
        description="relative: compared with the job's other series; individual: the job's only series"
    )
    drop_fraction: float = Field(ge=0, le=1, description="1 - (median slow score / baseline score)")
    windows: int = Field(ge=1, description="consecutive slow windows up to the latest one")
    baseline_score: float = Field(description="median score over the earlier windows")
    evidence: list[WindowEvidence]
    metric: str = DEFAULT_METRIC

    @model_validator(mode="after")
    def _evidence_matches(self) -> StragglerFinding:
        if len(self.evidence) != self.windows:
            raise ValueError("evidence must hold exactly the slow windows")
        return self

    def where(self) -> str:
        return f"{self.node} rank {self.rank}" if self.rank is not None else self.node

    def to_diagnosis(self) -> Diagnosis:
        """The shared contract. Category is hardware: the same code runs on every node, so one node
        slower than its peers points at that node (throttling, a degraded link, a failing GPU)."""
        confidence = 0.4 if self.mode == "individual" else min(0.9, 0.6 + 0.05 * (self.windows - 1))
        return Diagnosis(
            failure_kind=FailureKind.STRAGGLER,
            category=Category.HARDWARE if self.mode == "relative" else Category.UNKNOWN,
            signature=RULE_ID,
            retry_advice=RetryAdvice.RETRY_EXCLUDING_NODES,
            implicated_nodes=[self.node],
            confidence=round(confidence, 2),
            evidence=[self._evidence_line(w) for w in self.evidence],
            explanation=(
                f"job {self.job_id}: {self.where()} ran {self.drop_fraction:.0%} below its usual throughput "
                f"({'relative to the other nodes' if self.mode == 'relative' else 'its own history'}) "
                f"for the last {self.windows} windows."
            ),
        )

    def _evidence_line(self, w: WindowEvidence) -> Evidence:
        ref = f" vs peers' median {w.reference:.1f}" if w.reference is not None else ""
        text = (
            f"{w.end.isoformat()} {self.where()}: {w.value:.1f}{ref} "
            f"(score {w.score:.3f}, baseline {self.baseline_score:.3f})"
        )
        return Evidence(file=f"prometheus:{self.metric}", line_no=0, text=text, rule=RULE_ID)
