"""Goodput: the effective training time ratio (ETTR) of a large training job, and the GPU-hours it loses per week.

Pure and typed: :class:`Inputs` in, :class:`Estimate` rows out, for three ways of answering a failure
(:class:`Case`): Lazarus, Slurm alone, and a person on call. The formula and its derivation are in
docs/goodput.md; every default below is named there with its source, or marked as an assumption.

The model in one line: a job of ``N`` GPUs fails ``λ = N·r`` times per hour of useful training (``r`` per
GPU-hour, from a published failure count); each failure costs ``D`` seconds without useful progress (time until
the job runs again, the queue wait, the restart cost, and half a checkpoint interval recomputed); so
``ETTR = 1 / (1 + λ·D)`` and the GPU-hours lost per week are ``N · 168 h · (1 − ETTR)``.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

HOURS_PER_WEEK = 168.0

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class Fault(StrEnum):
    """How a failure shows itself, which decides who can see it and how fast."""

    CRASH = "crash"  # the job exits; a restart on the same nodes can succeed (software bug, transient error)
    BAD_NODE = "bad-node"  # the job exits because a node is faulty and stays up (GPU Xid, ECC, HBM): exclude it
    NODE_DOWN = "node-down"  # a node is lost (power, host): its slurmd stops answering, the other ranks block
    HANG = "hang"  # nothing exits, progress stops (switch, cable, NIC, a collective that never completes)


class Case(StrEnum):
    """Who answers a failure."""

    LAZARUS = "lazarus"
    SLURM = "slurm-alone"
    ON_CALL = "on-call"


class FailureRate(BaseModel):
    """A published failure count: ``interruptions`` in ``days`` on a job of ``gpus`` GPUs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    interruptions: float = Field(gt=0, allow_inf_nan=False)
    days: float = Field(gt=0, allow_inf_nan=False)
    gpus: int = Field(gt=0)

    @property
    def per_gpu_hour(self) -> float:
        """Failures per GPU-hour: a job's failures scale with its GPU count (a failure of any part stops it)."""
        return self.interruptions / (self.days * 24.0 * self.gpus)


# Meta, "The Llama 3 Herd of Models" (2024), §3.3.4: 419 unexpected interruptions in a 54-day snapshot of
# pre-training on 16,384 H100 GPUs.
LLAMA3 = FailureRate(interruptions=419, days=54, gpus=16384)

# The same report's 419 interruptions by root cause (its Table 5), grouped by how each shows itself
# (the grouping is ours; docs/goodput.md lists which cause went where).
LLAMA3_MIX: dict[Fault, float] = {Fault.CRASH: 56, Fault.BAD_NODE: 268, Fault.NODE_DOWN: 46, Fault.HANG: 49}


class Latencies(BaseModel):
    """The seconds each mechanism takes; together they give each case's time from a fault to running again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lazarus_detect: Seconds = Field(
        0.53, description="crash: failing line → anomaly recorded (p95, docs/benchmarks.md)"
    )
    lazarus_restart: Seconds = Field(
        7.00, description="advice → new attempt running elsewhere (p95, docs/benchmarks.md)"
    )
    lazarus_hang: Seconds = Field(120.54, description="hang: last progress → anomaly (2 min learned floor + 0.54 s)")
    lazarus_node_down: Seconds = Field(120.54, description="node lost: the surviving ranks block, seen as a hang")
    slurmd_timeout: Seconds = Field(300, description="Slurm marks a silent node DOWN (SlurmdTimeout default)")
    collective_timeout: Seconds = Field(600, description="a blocked collective fails (PyTorch NCCL default)")
    requeue: Seconds = Field(7.0, description="Slurm's requeue → running again (requeue delay, local cluster)")
    response: Seconds = Field(1800, description="a page → the on-call person has acted (assumption)")

    def to_running(self, case: Case, fault: Fault) -> float:
        """Seconds from the fault until the job runs again (before its own restart cost), for one case."""
        lazarus = {
            Fault.CRASH: self.lazarus_detect,
            Fault.BAD_NODE: self.lazarus_detect,
            Fault.NODE_DOWN: self.lazarus_node_down,
            Fault.HANG: self.lazarus_hang,
        }
        slurm = {  # RequeueExit and --requeue; a faulty node that stays up is not excluded: a person must drain it
            Fault.CRASH: 0.0,
            Fault.BAD_NODE: self.response,
            Fault.NODE_DOWN: self.slurmd_timeout,
            Fault.HANG: self.collective_timeout,
        }
        on_call = {  # no automatic requeue: every failure pages the person, once Slurm or the job shows it
            Fault.CRASH: self.response,
            Fault.BAD_NODE: self.response,
            Fault.NODE_DOWN: self.slurmd_timeout + self.response,
            Fault.HANG: self.collective_timeout + self.response,
        }
        if case is Case.LAZARUS:
            return lazarus[fault] + self.lazarus_restart
        return (slurm if case is Case.SLURM else on_call)[fault] + self.requeue


class JobCosts(BaseModel):
    """What a failure costs the job whoever answers it: recomputation, its own restart, the queue."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    checkpoint_interval: float = Field(1800, gt=0, allow_inf_nan=False, description="time between checkpoints")
    restart_cost: Seconds = Field(300, description="running again → training again (launch, load, warm-up)")
    queue_wait: Seconds = Field(0, description="requeued → running again (0: a reservation with spares)")

    @property
    def lost_work(self) -> float:
        """Seconds recomputed per failure: a failure lands, on average, half-way through a checkpoint interval."""
        return self.checkpoint_interval / 2


class Inputs(BaseModel):
    """Everything the estimate reads; each field has a documented default and a command-line option."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: FailureRate = LLAMA3
    mix: dict[Fault, float] = Field(default_factory=lambda: dict(LLAMA3_MIX))
    job: JobCosts = JobCosts()
    latencies: Latencies = Latencies()
    gpus: tuple[int, ...] = (1024, 16384)

    @field_validator("mix")
    @classmethod
    def _weights(cls, mix: dict[Fault, float]) -> dict[Fault, float]:
        if any(not math.isfinite(weight) or weight < 0 for weight in mix.values()):
            raise ValueError("the fault mix takes finite weights of 0 or more")
        if sum(mix.values()) <= 0:
            raise ValueError("the fault mix needs at least one fault with a weight above 0")
        return mix

    @field_validator("gpus")
    @classmethod
    def _sizes(cls, gpus: tuple[int, ...]) -> tuple[int, ...]:
        if not gpus or any(n < 1 for n in gpus):
            raise ValueError("give at least one job size, each of 1 GPU or more")
        return gpus

    def shares(self) -> dict[Fault, float]:
        """The fault mix as shares summing to 1 (weights may be counts)."""
        total = sum(self.mix.values())
        return {fault: self.mix.get(fault, 0.0) / total for fault in Fault}


class Estimate(BaseModel):
    """One case for one job size."""

    model_config = ConfigDict(frozen=True)

    case: Case
    gpus: int
    mtbf_hours: float = Field(description="hours of training between failures, 1/λ")
    failures_per_week: float = Field(description="failures in a week of wall time, λ · 168 h · ETTR")
    to_running_s: float = Field(description="mean seconds from a fault to running again, over the fault mix")
    downtime_per_failure_s: float = Field(description="D: to running + queue wait + restart cost + lost work")
    ettr: float = Field(description="effective training time ratio, 1 / (1 + λ·D)")
    gpu_hours_lost_per_week: float = Field(description="N · 168 h · (1 − ETTR)")


def ettr(failures_per_hour: float, downtime_s: float) -> float:
    """The share of wall time spent on useful training: ``1 / (1 + λ·D)``, in (0, 1]."""
    return 1.0 / (1.0 + failures_per_hour * downtime_s / 3600.0)


def to_running(inputs: Inputs, case: Case) -> float:
    """Mean seconds from a fault to running again, weighted by the fault mix."""
    return sum(share * inputs.latencies.to_running(case, fault) for fault, share in inputs.shares().items())


def downtime(inputs: Inputs, case: Case) -> float:
    """D: the seconds one failure costs the job, on average, in this case."""
    job = inputs.job
    return to_running(inputs, case) + job.queue_wait + job.restart_cost + job.lost_work


def estimate_one(inputs: Inputs, case: Case, gpus: int) -> Estimate:
    """The estimate for one case and one job size."""
    rate = gpus * inputs.rate.per_gpu_hour
    d = downtime(inputs, case)
    ratio = ettr(rate, d)
    return Estimate(
        case=case,
        gpus=gpus,
        mtbf_hours=1.0 / rate,
        failures_per_week=rate * HOURS_PER_WEEK * ratio,
        to_running_s=to_running(inputs, case),
        downtime_per_failure_s=d,
        ettr=ratio,
        gpu_hours_lost_per_week=gpus * HOURS_PER_WEEK * (1.0 - ratio),
    )


def estimate(inputs: Inputs) -> list[Estimate]:
    """Every case for every job size, sizes in the order given, cases in :class:`Case` order."""
    return [estimate_one(inputs, case, gpus) for gpus in inputs.gpus for case in Case]
