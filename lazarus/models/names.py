"""The names of Lazarus's workflows and their messages: the contract between clients and workflows.

Workflow ids, workflow types, and the signal, update and query names live here
so that a client (the telemetry loop, the CLI) can address a workflow by name
without importing workflow code. The workflows declare their handlers with
these same constants. Never change a value: running workflows and stored
histories carry them.
"""

from __future__ import annotations

# ---- the job workflow: one per opted-in Slurm job ----------------------------------------------

JOB_WORKFLOW = "JobRecoveryWorkflow"
JOB_EVENT = "job_event"  # signal: a JobEventEnvelope; what telemetry sent before the named signals below
# signals from the telemetry loop, one per kind of event, named for what they carry (the UI's timeline reads as
# the job's story); each carries the event itself
ATTEMPT_STARTED = "attempt_started"  # AttemptStarted
PROGRESS = "progress"  # ProgressDigest
ATTEMPT_ENDED = "attempt_ended"  # AttemptEnded
SUSPENSION = "suspension"  # AttemptSuspension
ANOMALY = "anomaly"  # AnomalyDetected
TELEMETRY_NOTE = "telemetry_note"  # TelemetryNote
LEDGER_NOTE = "ledger_note"  # LedgerNote (from the node ledger)
EVENT_SIGNALS: dict[str, str] = {
    "attempt_started": ATTEMPT_STARTED,
    "progress": PROGRESS,
    "attempt_ended": ATTEMPT_ENDED,
    "suspension": SUSPENSION,
    "anomaly": ANOMALY,
    "note": TELEMETRY_NOTE,
    "ledger_note": LEDGER_NOTE,
}
"""The signal that carries each kind of job event, by the event's ``type``."""
APPROVE_ADVICE = "approve_advice"  # update (validated) and signal of the same name
REJECT_ADVICE = "reject_advice"  # update (validated) and signal of the same name
SET_MODE = "set_mode"  # signal: a ModeChange (per job, or the cluster's kill switch)
JOB_STATUS = "status"  # query: JobStatus

# ---- the node ledger: one per cluster -----------------------------------------------------------

LEDGER_WORKFLOW = "NodeLedgerWorkflow"
RECORD_IMPLICATION = "record_implication"  # signal: an Implication from a job workflow
RESUME_NODE = "resume_node"  # update: ResumeRequest
DRAIN_NODE = "drain_node"  # update: DrainRequest
SET_LEDGER_POLICY = "set_policy"  # signal: PolicyChange (drain budget, lemon rules, reconciliation)
SET_CLUSTER_MODE = "set_cluster_mode"  # signal: ModeChange for jobs discovered from now on
LEDGER_VIEW = "view"  # query: LedgerView
CLUSTER_MODE_MEMO = "cluster_mode"  # the ledger's memo: its ClusterMode, served by the server (describe)

# ---- the telemetry lease: one per cluster, held by the one telemetry replica that runs the loop ----

TELEMETRY_LEASE_WORKFLOW = "TelemetryLeaseWorkflow"
ACQUIRE_LEASE = "acquire"  # update: LeaseRequest -> LeaseGrant (refused while another holder's term lasts)
RENEW_LEASE = "renew"  # update: LeaseRequest -> LeaseGrant (refused unless the caller's term is current)
RELEASE_LEASE = "release"  # update: LeaseRequest (the holder stops; a standby may take over at once)
LEASE_VIEW = "view"  # query: LeaseView


def workflow_id(cluster: str, job_id: int) -> str:
    """The job workflow's id: one workflow per job, named by cluster and Slurm job id."""
    return f"lazarus-{cluster}-{job_id}"


def job_of_workflow_id(wid: str) -> tuple[str, int] | None:
    """The cluster and job a job workflow id names (``lazarus-<cluster>-<job id>``); None for anything else."""
    prefix, _, rest = wid.partition("-")
    cluster, _, job = rest.rpartition("-")
    if prefix != "lazarus" or not cluster or not job.isascii() or not job.isdigit():
        return None
    return cluster, int(job)


def ledger_id(cluster: str) -> str:
    """The node ledger's id: one per cluster."""
    return f"lazarus-{cluster}-ledger"


def telemetry_lease_id(cluster: str) -> str:
    """The telemetry lease's id: one per cluster."""
    return f"lazarus-{cluster}-telemetry-lease"
