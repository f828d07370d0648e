"""Snapshots of Slurm state and the requests/results of scheduler actions."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


class JobState(StrEnum):
    """Slurm base job states (22.05), plus UNKNOWN for anything unexpected."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    COMPLETING = "COMPLETING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    PREEMPTED = "PREEMPTED"
    BOOT_FAIL = "BOOT_FAIL"
    DEADLINE = "DEADLINE"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    REQUEUED = "REQUEUED"
    REQUEUE_HOLD = "REQUEUE_HOLD"
    REQUEUE_FED = "REQUEUE_FED"
    RESIZING = "RESIZING"
    REVOKED = "REVOKED"
    SPECIAL_EXIT = "SPECIAL_EXIT"
    STOPPED = "STOPPED"
    SIGNALING = "SIGNALING"
    STAGE_OUT = "STAGE_OUT"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def parse(cls, raw: object) -> JobState:
        words = raw.split() if isinstance(raw, str) else []
        base = words[0].rstrip("+") if words else ""
        try:
            return cls(base)
        except ValueError:
            return cls.UNKNOWN

    @property
    def finished(self) -> bool:
        return self in _FINISHED

    @property
    def failed(self) -> bool:
        return self in _FAILED


_FINISHED = frozenset(
    {
        JobState.COMPLETED,
        JobState.CANCELLED,
        JobState.FAILED,
        JobState.TIMEOUT,
        JobState.NODE_FAIL,
        JobState.PREEMPTED,
        JobState.BOOT_FAIL,
        JobState.DEADLINE,
        JobState.OUT_OF_MEMORY,
    }
)
_FAILED = frozenset({JobState.FAILED, JobState.TIMEOUT, JobState.NODE_FAIL, JobState.BOOT_FAIL, JobState.OUT_OF_MEMORY})


class JobSnapshot(BaseModel):
    """One job as Slurm shows it at one moment."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    name: str = ""
    user: str = ""
    user_id: int | None = Field(None, ge=0, description="the job's numeric user id (its log files must be its own)")
    partition: str = ""
    state: JobState
    state_reason: str = ""
    restarts: int = Field(0, ge=0, description="Slurm restart count = Lazarus attempt index")
    nodes: list[str] = Field(default_factory=list, description="expanded NodeList (empty while pending)")
    excluded_nodes: list[str] = Field(default_factory=list, description="expanded ExcNodeList")
    batch_host: str | None = None
    exit_code: int | None = Field(None, description="process exit status (decoded), None while running")
    exit_signal: int | None = Field(None, description="terminating signal, if any")
    comment: str = ""
    stdout_path: str | None = Field(None, description="expanded StdOut path (scontrol only)")
    stderr_path: str | None = None
    work_dir: str | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    submit_time: datetime | None = None
    held: bool = Field(False, description="held by a requeuehold or hold (priority 0)")
    priority: int | None = Field(None, ge=0, description="the job's scheduling priority, when Slurm printed one")
    tasks_per_node: int | None = Field(None, ge=1, description="ranks per node (block distribution), if known")

    @property
    def attempt(self) -> int:
        return self.restarts


class SacctRecord(BaseModel):
    """One row of `sacct -P -D` (one attempt or one step)."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    state: JobState
    exit_code: int
    exit_signal: int
    nodes: list[str] = Field(default_factory=list)
    start_time: datetime | None = None
    end_time: datetime | None = None
    attempt: int | None = Field(None, description="attempt index of a job-level row (its position in `sacct -D`)")


class NodeState(BaseModel):
    """One node as `scontrol show node -o` shows it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    state: str = Field(description="full state string, e.g. IDLE+DRAIN")
    reason: str = ""
    address: str = Field("", description="NodeAddr: where its slurmd listens")
    port: int | None = Field(None, description="the port its slurmd listens on (Port), when shown")

    @property
    def drained(self) -> bool:
        return "DRAIN" in self.state.upper()

    @property
    def down(self) -> bool:
        return "DOWN" in self.state.upper()


class NodeCensusRequest(BaseModel):
    """The node ledger's read of Slurm: the states of the nodes it keeps records of."""

    model_config = ConfigDict(extra="forbid")

    names: list[str] = Field(default_factory=list, description="the nodes whose states are wanted")


class NodeCensus(BaseModel):
    """Slurm's nodes as the node ledger needs them: how many there are and how many are drained (its drain
    budget), and the states of the nodes it asked about that Slurm knows (a name missing here is not a node of
    the cluster). The whole node list would put every node of a large cluster into the ledger's history at each
    reconciliation (1.5 MB for 20,000 nodes)."""

    model_config = ConfigDict(extra="forbid")

    total: int = Field(ge=0, description="nodes Slurm knows; 0 is an answer not to be trusted")
    drained: int = Field(ge=0, description="nodes drained or draining, whoever drained them")
    states: list[NodeState] = Field(default_factory=list)

    @classmethod
    def of(cls, nodes: list[NodeState], names: list[str]) -> NodeCensus:
        """The census of a full node list, keeping the states of ``names`` only."""
        wanted = set(names)
        return cls(
            total=len(nodes),
            drained=sum(1 for n in nodes if n.drained),
            states=[n for n in nodes if n.name in wanted],
        )

    def by_name(self) -> dict[str, NodeState]:
        return {n.name: n for n in self.states}


class RestartRequest(BaseModel):
    """Requeue a job so its next attempt runs without the given nodes."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    expected_attempt: int = Field(
        ge=0, description="the attempt being replaced; a job already past it is not requeued again"
    )
    exclude_nodes: list[str] = Field(default_factory=list)
    lost_nodes: list[str] = Field(
        default_factory=list,
        description="excluded nodes that Lazarus's liveness found dead (node agent silent): one that holds the "
        "requeued job in COMPLETING and whose slurmd does not answer is set DOWN (lazarus/slurm/node_down.py)",
    )
    reason: str = ""
    wait_running_s: float = Field(
        0.0, ge=0, description="also verify, waiting up to this long, that the job runs on none of exclude_nodes"
    )
    expedite: bool = Field(
        False,
        description="put the pending new attempt ahead of every other pending job of its partition (a priority "
        "set by Lazarus's operator account, verified); decided by workflows.expedite, only for infrastructure "
        "and hardware failures",
    )

    @model_serializer(mode="wrap")
    def _omit_new_fields_when_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave ``expedite`` and ``lost_nodes`` out unless used: a scheduler worker of the release before them
        (whose request model forbids unknown fields) still takes every other restart during a rolling upgrade."""
        data: dict[str, Any] = handler(self)
        if not self.expedite:
            data.pop("expedite", None)
        if not self.lost_nodes:
            data.pop("lost_nodes", None)
        return data


class RestartResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job_id: int
    new_attempt: int
    excluded_nodes: list[str]
    already_done: bool = Field(
        False,
        description="the attempt had already been requeued (by Slurm, or by a "
        "previous try of this action) when the action read the job",
    )
    state: JobState
    nodes: list[str] = Field(default_factory=list, description="where the new attempt runs (when verified running)")
    not_done_reason: str | None = Field(
        None,
        description="set when nothing was done because the fresh read showed the attempt had completed or "
        "been cancelled: Lazarus never requeues such a job (``state`` and ``exit_code`` say how it ended)",
    )
    exit_code: int | None = Field(None, description="the attempt's exit status, when it had ended (not_done_reason)")
    exclusions_applied: bool | None = Field(
        None,
        description="whether the new attempt carries every node of the request's exclude_nodes "
        "(None: reported by an older worker)",
    )
    exclusions_not_applied_reason: str | None = Field(
        None,
        description="why the exclusions are not on the new attempt, e.g. it was already running when the "
        "action found it requeued (Slurm changes exclusions only on a pending job)",
    )
    expedite: ExpediteResult | None = Field(None, description="what the expedite did (None: not asked for)")


class ExpediteResult(BaseModel):
    """Expedited requeue: the pending attempt put at the top of its partition's queue, read back from Slurm.

    Slurm 22.05 has no expedited requeue, and ``scontrol top`` reorders only one user's own jobs; so Lazarus's
    operator account sets the attempt's priority above every other pending job of the partition, and lifts
    it again once the attempt runs (:class:`LiftRequest`).
    """

    model_config = ConfigDict(extra="forbid")

    job_id: int
    attempt: int = Field(ge=0, description="the attempt that was (or was to be) expedited")
    done: bool = Field(description="fresh state shows the attempt above every other pending job of its partition")
    method: str = Field("priority", description="how: a priority set by the operator account")
    priority_before: int | None = Field(None, ge=0, description="the attempt's priority before the boost")
    priority_after: int | None = Field(None, ge=0, description="its priority as read back after the boost")
    ahead_of: list[int] = Field(
        default_factory=list, description="pending jobs of the partition it was put ahead of (submitted earlier or not)"
    )
    reason: str = Field("", description="why nothing was done (the attempt already runs, a user's hold, ...)")


class LiftRequest(BaseModel):
    """Lift an expedite's priority once the attempt runs: back to what it was, so a later requeue that Lazarus did
    not decide (a node failure Slurm handles itself) waits like everyone else."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    attempt: int = Field(ge=0, description="the expedited attempt; a job on another attempt is left alone")
    boosted: int = Field(ge=0, description="the priority the expedite set; any other value is not Lazarus's")
    restore: int = Field(ge=1, description="the priority to go back to")


class LiftResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job_id: int
    changed: bool
    priority: int | None = Field(None, ge=0, description="the job's priority as read back")
    reason: str = ""


class ReleaseRequest(BaseModel):
    """Fail-open release of a hold Lazarus placed while restarting ``attempt`` (on that attempt, or on the next
    one its requeue-hold created). Another attempt's hold, or a user's own hold, is left alone."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    attempt: int = Field(ge=0, description="the attempt the restart replaced")


class CancelRequest(BaseModel):
    """Cancel the job because Lazarus decided to stop it, but only the attempt that decision was about."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    expected_attempt: int = Field(ge=0, description="the attempt the stop was decided for; any other is left alone")
    reason: str = Field("", description="why Lazarus stops the job (the stop advice's reason), for the record")


class CancelResult(BaseModel):
    """What the stop's cancel found and did, as a fresh read shows it."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    attempt: int = Field(description="the attempt Slurm shows (its restart count)")
    state: JobState = Field(description="the job's state after the action (before it, when nothing was done)")
    cancelled: bool = Field(False, description="this call ran scancel and saw the job leave RUNNING/PENDING")
    already_done: bool = Field(
        False,
        description="the attempt was already cancelled when the action read it (by a previous try of this "
        "action, or by someone else): the allocation is free",
    )
    not_done_reason: str | None = Field(
        None,
        description="set when nothing was cancelled because the fresh read showed the attempt had ended on its "
        "own or the job had moved on to another attempt",
    )
    exit_code: int | None = Field(None, description="the attempt's exit status, when it had ended on its own")


class JobActionResult(BaseModel):
    """Outcome of a single-job action (cancel, release), verified by a fresh read."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    changed: bool = Field(description="False when the job was already in the wanted state")
    state: JobState
    held: bool = False


class SubmitRequest(BaseModel):
    """Submit a batch job with ``sbatch``, optionally carrying a comment (the Lazarus opt-in)."""

    model_config = ConfigDict(extra="forbid")

    args: list[str] = Field(description="sbatch options, then the batch script and its arguments, as on a command line")
    comment: str | None = Field(None, description="set as --comment and verified; None when args carry their own")


class SubmitResult(BaseModel):
    """A job sbatch accepted, as a fresh read shows it."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    state: JobState
    comment: str = ""


class CommentResult(BaseModel):
    """Outcome of setting a job's comment, verified by a fresh read."""

    model_config = ConfigDict(extra="forbid")

    job_id: int
    changed: bool = Field(description="False when the job already carried this comment")
    comment: str


class NodeAction(BaseModel):
    """Drain or resume nodes."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[str]
    reason: str = ""


class NodeActionResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    changed: list[str] = Field(default_factory=list, description="nodes this call changed")
    unchanged: list[str] = Field(default_factory=list, description="nodes already in the wanted state")
    nodes: list[NodeState] = Field(default_factory=list, description="verified state afterwards")


RestartResult.model_rebuild()  # it names ExpediteResult, defined after it
