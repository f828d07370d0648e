"""The catalogue of Lazarus's own metrics: every name, kind, label and help text, declared once.

A contract like :mod:`lazarus.models.names`: the Grafana dashboard and the alert rules in the Helm
chart query these names, and docs/metrics.md is generated from this list
(scripts/gen_metrics_docs.py). Never rename a metric or a label value lightly: dashboards and
alerts outside this repository query them too.

Two kinds of source:

- ``worker``: recorded by a worker process (the telemetry loop, the Slurm adapter, the telemetry
  role's periodic look at the cluster) with prometheus_client, served on ``metrics.port``;
- ``workflow``: facts only a workflow knows (a detection recorded, advice answered, a requeue
  verified, a drain refused), recorded through Temporal's replay-safe workflow metric meter
  (nothing is recorded while a workflow replays) and served with the Temporal SDK's own metrics on
  ``metrics.temporal_port`` of the control workers. They also carry the SDK's ``namespace``,
  ``task_queue``, ``workflow_type`` and ``service_name`` labels.

Label values are bounded: no job ids, no node names. Pure declarations (no I/O, nothing heavy):
workflow code imports this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["counter", "gauge", "histogram"]
Source = Literal["worker", "workflow"]

LATENCY_BUCKETS = (0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0)
"""Seconds: the design's targets (detection within 5 s, action within 10 s) fall inside the fine part."""
COMMAND_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
MILESTONE_BUCKETS = (
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    1800.0,
    3600.0,
    7200.0,
    21600.0,
    86400.0,
)
"""Seconds from a fault to a milestone: a restart within seconds, a queue wait or the rest of a training run in hours."""
CYCLE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


@dataclass(frozen=True)
class MetricSpec:
    """One metric: what it is called, what it counts, by which labels, and who records it."""

    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...] = ()
    source: Source = "worker"
    roles: tuple[str, ...] = ("control", "scheduler", "telemetry")
    """The worker roles whose endpoint serves it."""
    buckets: tuple[float, ...] = ()
    label_values: tuple[tuple[str, str], ...] = ()
    """For the docs: each label's possible values, in words."""


# ---- recorded by the workflows (Temporal's workflow metric meter, control role) ---------------------------

DETECTIONS = MetricSpec(
    "lazarus_detections_total",
    "counter",
    "Anomalies recorded by job workflows (once per anomaly, whatever found it).",
    ("cluster", "kind", "category", "signature", "source"),
    source="workflow",
    roles=("control",),
    label_values=(
        ("kind", "crash, hang, straggler"),
        ("category", "hardware, system_software, infrastructure, application, unknown"),
        ("signature", "the root-cause signature id, 'none' without one, 'other' for an id outside [a-z0-9_.-]{1,64}"),
        ("source", "log, scheduler, hang-watchdog, straggler"),
    ),
)
DETECTION_LATENCY = MetricSpec(
    "lazarus_detection_latency_seconds",
    "histogram",
    "From the evidence (the failing line read, the job's end, the hang budget running out) to the anomaly "
    "recorded in the job's workflow.",
    ("cluster", "kind", "source"),
    source="workflow",
    roles=("control",),
    buckets=LATENCY_BUCKETS,
)
ADVICE = MetricSpec(
    "lazarus_advice_total",
    "counter",
    "Advice published (one per decision).",
    ("cluster", "action", "mode"),
    source="workflow",
    roles=("control",),
    label_values=(("action", "restart, stop, none"), ("mode", "monitor, act")),
)
ADVICE_ANSWERS = MetricSpec(
    "lazarus_advice_answers_total",
    "counter",
    "What became of advice that waited for an operator: approved (by an operator, or by a switch to act "
    "mode), rejected, expired (nobody answered within the decision timeout) or superseded (the job moved on).",
    ("cluster", "answer"),
    source="workflow",
    roles=("control",),
    label_values=(("answer", "approved, rejected, expired, superseded"),),
)
ACTION_LATENCY = MetricSpec(
    "lazarus_action_latency_seconds",
    "histogram",
    "From the decision to act (act mode: the advice; monitor mode: the approval) until the requeue was "
    "verified (held, excluded, released), or until the next attempt was running elsewhere (includes "
    "Slurm's own queue wait).",
    ("cluster", "until"),
    source="workflow",
    roles=("control",),
    buckets=LATENCY_BUCKETS,
    label_values=(("until", "requeue_verified, running_elsewhere"),),
)
RECOVERIES = MetricSpec(
    "lazarus_recoveries_total",
    "counter",
    "How each incident that called for action ended: restarted (requeue verified), stopped (stop advice "
    "taken), action_failed (the scheduler refused the restart; the job was released), not_acted "
    "(advice rejected, expired or superseded).",
    ("cluster", "outcome"),
    source="workflow",
    roles=("control",),
    label_values=(("outcome", "restarted, stopped, action_failed, not_acted"),),
)
RECOVERY_MILESTONES = MetricSpec(
    "lazarus_recovery_milestone_seconds",
    "histogram",
    "From the fault that ended an attempt (its failing line, its end, its hang budget running out) to each "
    "milestone of the attempt after it: requeued (Lazarus's requeue verified), running (Slurm started it), "
    "progress_restored (its first progress line: training again, not just running), completed (it ended "
    "COMPLETED). Recorded once per attempt and milestone.",
    ("cluster", "milestone"),
    source="workflow",
    roles=("control",),
    buckets=MILESTONE_BUCKETS,
    label_values=(("milestone", "requeued, running, progress_restored, completed"),),
)
STEPS_LOST = MetricSpec(
    "lazarus_steps_lost_total",
    "counter",
    "Training steps lost to failures: for each restarted attempt that printed progress, the last step seen "
    "before it minus the checkpoint it resumed from.",
    ("cluster",),
    source="workflow",
    roles=("control",),
)
JOBS_FINISHED = MetricSpec(
    "lazarus_jobs_finished_total",
    "counter",
    "Job workflows that reached a final state.",
    ("cluster", "state"),
    source="workflow",
    roles=("control",),
    label_values=(("state", "completed, stopped, failed, ignored"),),
)
DRAINS = MetricSpec(
    "lazarus_drains_total",
    "counter",
    "Nodes the node ledger drained: on its own evidence rules (lazarus) or for an operator (`lazarus nodes drain`).",
    ("cluster", "by"),
    source="workflow",
    roles=("control",),
    label_values=(("by", "lazarus, operator"),),
)
DRAINS_REFUSED = MetricSpec(
    "lazarus_drains_refused_total",
    "counter",
    "Drains the node ledger wanted but did not do: the drain budget was spent, the scheduler could not be "
    "read to check it, or the drain itself failed (the job's exclusion still holds).",
    ("cluster", "reason"),
    source="workflow",
    roles=("control",),
    label_values=(("reason", "budget, scheduler_unreadable, failed"),),
)

SPARE_REFILLS = MetricSpec(
    "lazarus_spare_refills_total",
    "counter",
    "Spare pool checks that changed or could not change a reservation: a member Lazarus excluded or drained "
    "replaced by a healthy idle node of the general pool (refilled), or left in place because none was free "
    "(short; counted when it becomes short).",
    ("cluster", "reservation", "outcome"),
    source="workflow",
    roles=("control",),
    label_values=(("reservation", "the reservations the policies name"), ("outcome", "refilled, short")),
)

# ---- recorded by worker processes (prometheus_client) -------------------------------------------------

WORKER_INFO = MetricSpec(
    "lazarus_worker_info",
    "gauge",
    "1 for each role this worker process serves (a process of role 'all' has three series).",
    ("cluster", "role", "version"),
)
SCHEDULER_COMMAND_DURATION = MetricSpec(
    "lazarus_scheduler_command_duration_seconds",
    "histogram",
    "Wall-clock time of one Slurm command (local or over SSH), failed ones included.",
    ("command",),
    roles=("scheduler", "telemetry"),
    buckets=COMMAND_BUCKETS,
    label_values=(
        ("command", "the program, with scontrol's subcommand: squeue, scontrol show, scontrol requeuehold, ..."),
    ),
)
SCHEDULER_COMMAND_ERRORS = MetricSpec(
    "lazarus_scheduler_command_errors_total",
    "counter",
    "Slurm commands that failed, by command and typed error (e.g. ControllerUnreachable, CommandTimeout, "
    "UnknownJob, PermissionDenied).",
    ("command", "error"),
    roles=("scheduler", "telemetry"),
)
TELEMETRY_CYCLES = MetricSpec(
    "lazarus_telemetry_cycles_total",
    "counter",
    "Telemetry cycles (one scheduler query for the whole cluster each): ok, or failed (scheduler or Temporal "
    "unreachable: Lazarus is blind until a cycle succeeds).",
    ("result",),
    roles=("telemetry",),
    label_values=(("result", "ok, failed"),),
)
TELEMETRY_CYCLE_DURATION = MetricSpec(
    "lazarus_telemetry_cycle_duration_seconds",
    "histogram",
    "Time one telemetry cycle took (scheduler query, log tails, signals to workflows).",
    roles=("telemetry",),
    buckets=CYCLE_BUCKETS,
)
TELEMETRY_LAG = MetricSpec(
    "lazarus_telemetry_lag_seconds",
    "gauge",
    "Seconds since the last telemetry cycle that read the scheduler ended, beyond the discovery interval (counted "
    "from the loop's start before its first cycle). 0 while cycles keep their pace; growing while Lazarus is "
    "blind (scheduler or Temporal unreachable) or lagging (cycles slower than the interval).",
    roles=("telemetry",),
)
WATCHED_JOBS = MetricSpec(
    "lazarus_watched_jobs",
    "gauge",
    "Opted-in jobs the telemetry loop is watching (their workflows are open).",
    roles=("telemetry",),
)
JOB_RESTARTS_MAX = MetricSpec(
    "lazarus_job_restarts_last_hour_max",
    "gauge",
    "The most new attempts any one watched job started within the last hour (a job stuck in a recovery "
    "loop keeps starting new ones).",
    roles=("telemetry",),
)
ADVICE_PENDING = MetricSpec(
    "lazarus_advice_pending",
    "gauge",
    "Jobs whose advice awaits an operator's approval (monitor mode).",
    roles=("telemetry",),
)
ADVICE_PENDING_AGE = MetricSpec(
    "lazarus_advice_pending_oldest_age_seconds",
    "gauge",
    "How long the oldest advice awaiting approval has waited (0 when none waits).",
    roles=("telemetry",),
)
LEDGER_NODES = MetricSpec(
    "lazarus_ledger_nodes",
    "gauge",
    "Node records in the cluster's node ledger.",
    roles=("telemetry",),
)
LEDGER_IMPLICATIONS = MetricSpec(
    "lazarus_ledger_implications",
    "gauge",
    "Implications (a job attempt blamed a node) the node ledger keeps.",
    roles=("telemetry",),
)
NODES_DRAINED = MetricSpec(
    "lazarus_nodes_drained",
    "gauge",
    "Nodes drained in the node ledger's view: by Lazarus, or by someone else (an operator, or outside Lazarus).",
    ("by",),
    roles=("telemetry",),
    label_values=(("by", "lazarus, other"),),
)
DRAIN_BUDGET_REMAINING = MetricSpec(
    "lazarus_drain_budget_remaining_nodes",
    "gauge",
    "How many more nodes the node ledger may drain now: the cluster's nodes times ledger.max_drain_fraction, "
    "less the nodes Slurm shows drained (0: the budget is spent, further drains are refused).",
    roles=("telemetry",),
)
SPARES_FREE = MetricSpec(
    "lazarus_spares_free",
    "gauge",
    "Spares of each pool idle and trusted at the node ledger's last check (at most the policy's spare count).",
    ("reservation",),
    roles=("telemetry",),
)
SPARES_USED = MetricSpec(
    "lazarus_spares_used",
    "gauge",
    "Spares of each pool taken by work or lost: the policy's spare count less the free ones.",
    ("reservation",),
    roles=("telemetry",),
)
SPARES_SHORT = MetricSpec(
    "lazarus_spares_short_nodes",
    "gauge",
    "Members of each pool Lazarus wants replaced that are still in the reservation: no healthy idle node was "
    "free (the ledger retries).",
    ("reservation",),
    roles=("telemetry",),
)
CLUSTER_VIEW_ERRORS = MetricSpec(
    "lazarus_cluster_view_errors_total",
    "counter",
    "Failed reads of the telemetry role's periodic look at the cluster (the gauges above keep their last "
    "value): Temporal's visibility, the node ledger, or the scheduler's node list.",
    ("source",),
    roles=("telemetry",),
    label_values=(("source", "visibility, ledger, scheduler"),),
)

CATALOGUE: tuple[MetricSpec, ...] = (
    DETECTIONS,
    DETECTION_LATENCY,
    ADVICE,
    ADVICE_ANSWERS,
    ACTION_LATENCY,
    RECOVERIES,
    RECOVERY_MILESTONES,
    STEPS_LOST,
    JOBS_FINISHED,
    DRAINS,
    DRAINS_REFUSED,
    SPARE_REFILLS,
    WORKER_INFO,
    SCHEDULER_COMMAND_DURATION,
    SCHEDULER_COMMAND_ERRORS,
    TELEMETRY_CYCLES,
    TELEMETRY_CYCLE_DURATION,
    TELEMETRY_LAG,
    WATCHED_JOBS,
    JOB_RESTARTS_MAX,
    ADVICE_PENDING,
    ADVICE_PENDING_AGE,
    LEDGER_NODES,
    LEDGER_IMPLICATIONS,
    NODES_DRAINED,
    DRAIN_BUDGET_REMAINING,
    SPARES_FREE,
    SPARES_USED,
    SPARES_SHORT,
    CLUSTER_VIEW_ERRORS,
)

TEMPORAL_SDK_METRICS = (
    "temporal_workflow_task_schedule_to_start_latency",
    "temporal_activity_schedule_to_start_latency",
    "temporal_workflow_task_execution_failed",
    "temporal_activity_execution_failed",
    "temporal_worker_task_slots_available",
)
"""The Temporal SDK metrics (served next to the workflow ones) that the dashboard and alerts use."""

_SIGNATURE = re.compile(r"^[a-z0-9_.-]{1,64}$")


def signature_label(signature: str | None) -> str:
    """A signature id as a label value: 'none' without one, 'other' for anything but a plain id (an external
    attribution provider may name signatures of its own; the label must stay bounded and safe)."""
    if not signature:
        return "none"
    return signature if _SIGNATURE.match(signature) else "other"


def series_names(spec: MetricSpec) -> tuple[str, ...]:
    """The names Prometheus stores for ``spec``: a histogram's buckets, sum and count."""
    if spec.kind == "histogram":
        return (f"{spec.name}_bucket", f"{spec.name}_sum", f"{spec.name}_count")
    return (spec.name,)
