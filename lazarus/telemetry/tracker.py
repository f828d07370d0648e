"""Per-job telemetry state: which attempt we are on, what its logs said, what was already reported.

A :class:`JobTracker` turns successive scheduler snapshots and new log lines
into the few events a job workflow needs (attempt started/ended, anomaly,
coarse progress). It does no I/O itself; :mod:`lazarus.telemetry.loop` feeds
it. Detector state resets at every attempt boundary, so a stale failure line
from an earlier attempt never triggers again.

It also knows when telemetry last *saw* the job: a cycle with a fresh
scheduler row for it and, while it runs, every output file read. Progress
digests carry that time (the heartbeat), and the progress view says when
telemetry is blind to the job, so the hang watchdog never decides on missing
data.

It keeps each attempt's **hang clock** (telemetry reads every line every
cycle; the workflow need not hear each step): a digest goes out only for the
first progress, a new checkpoint, a phase or budget change, sight regained, a
keep-alive every :data:`KEEP_ALIVE` while the job steps, and once when the
silence reaches the budget (``silent``; the workflow then checks the progress
view, and its own timer is only a backstop, ``workflows.timers.BACKSTOP``). Its :class:`~lazarus.telemetry.outbox.Outbox` holds the events not
delivered yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from lazarus.detection.engine import Analyzer
from lazarus.detection.hang import HangBudget, HangPhase
from lazarus.detection.layout import RankLayout
from lazarus.detection.progress_lines import ProgressEvent, ProgressSample, parse_progress
from lazarus.models.diagnosis import FailureKind
from lazarus.models.policy import Policy
from lazarus.models.recovery import (
    Anomaly,
    AnomalyDetected,
    AttemptEnded,
    AttemptStarted,
    AttemptSuspension,
    JobEvent,
    ProgressDigest,
    ProgressView,
)
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.telemetry.outbox import Outbox

# After the first failure line, wait this long for the rest of the failure (the
# root error is often printed by another rank a moment later) before reporting.
SETTLE = timedelta(seconds=1)
KEEP_ALIVE = timedelta(minutes=25)
"""A stepping job's digest at least this often: it moves the workflow's backstop (30 min after the last progress
it heard, ``workflows.timers.BACKSTOP``) on before it fires, with minutes to spare for a slow delivery."""


def _moved(budget: timedelta, sent: timedelta | None) -> bool:
    """The learned budget shrank or grew by more than a fifth since the workflow last heard it."""
    return sent is None or abs(budget - sent) > sent / 5


def analyzer_for(nodes: list[str], tasks_per_node: int | None) -> Analyzer:
    """A fresh analyzer that can name nodes from rank prefixes of this attempt's layout, and names only
    nodes of this attempt's allocation (``nodes``): a job's output cannot implicate anybody else's node."""
    if tasks_per_node is None and len(nodes) > 1:
        # Slurm did not say how ranks spread over the nodes: a rank prefix must name no node rather than
        # a wrong one (host names in the lines, and SLURMD_NODENAME lines, still name nodes)
        layout = RankLayout()
    else:
        layout = RankLayout(nodes=list(nodes), tasks_per_node=tasks_per_node if nodes else None)
    return Analyzer(layout=layout, known_nodes=list(nodes), allocation=list(nodes))


@dataclass
class AttemptTelemetry:
    index: int
    analyzer: Analyzer
    hang: HangBudget
    started_reported: bool = False
    ended_reported: bool = False
    anomaly_reported: bool = False
    first_failure_seen_at: datetime | None = None
    step: int | None = None
    checkpoint: int | None = None
    first_step: int | None = None  # the attempt's first progress line: training (progress restored), not just running
    first_progress_at: datetime | None = None
    total_steps: int | None = None  # the total the newest progress line that declared one gave
    digest_sent_at: datetime | None = None
    digest_step: int | None = None
    digest_checkpoint: int | None = None
    stragglers_reported: set[str] = field(default_factory=set)
    digest_checkpointing: bool = False
    digest_budget: timedelta | None = None
    suspended: bool = False  # Slurm showed the attempt SUSPENDED in the last cycle (reported to the workflow)
    resumed_at: datetime | None = None  # the last resume from a suspension: the hang clock runs afresh from it
    silence_reported_for: datetime | None = None  # the silence a `silent` digest was sent for (its start)

    # progress timing lives in the hang learner; these read it rather than keep copies
    @property
    def last_progress_at(self) -> datetime | None:
        return self.hang.last_progress_at

    @property
    def max_step_interval(self) -> timedelta | None:
        return self.hang.slowest_step_interval

    @property
    def checkpointing(self) -> bool:
        return self.hang.phase is HangPhase.CHECKPOINT


@dataclass
class JobTracker:
    job_id: int
    layout_nodes: list[str]
    tasks_per_node: int | None = None
    policy: Policy = field(default_factory=Policy)
    closed: bool = False
    log_paths: list[str] = field(default_factory=list)
    user_id: int | None = None  # the job's Slurm user id: its log files must be owned by it
    notes_sent: set[str] = field(default_factory=set)  # telemetry notes already sent to the workflow
    attempt: AttemptTelemetry | None = None
    observed_at: datetime | None = None  # the last cycle that saw the job (fresh scheduler row, logs read)
    blind_reason: str | None = None  # why the latest cycle did not see it (None: it did)
    sight_back: bool = False  # seen again after a blind gap: the next digest is due at once (the heartbeat)
    blind_after: timedelta = timedelta(seconds=15)  # the loop's setting, as last passed to saw()
    outbox: Outbox = field(init=False)

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.job_id)

    def saw(self, now: datetime, blind_after: timedelta) -> None:
        """This cycle saw the job: a fresh scheduler row and, while it runs, every output file read."""
        if self.blind_reason is not None and self.observed_at is not None and now - self.observed_at > blind_after:
            self.sight_back = True
        self.observed_at, self.blind_reason, self.blind_after = now, None, blind_after

    def missed(self, reason: str) -> None:
        """This cycle could not see the job (no scheduler row, or a log that could not be read)."""
        self.blind_reason = reason

    def blindness(self, now: datetime, blind_after: timedelta) -> str | None:
        """Why telemetry cannot vouch for the job now (not seen within ``blind_after``); None when it can."""
        if self.observed_at is not None and now - self.observed_at <= blind_after:
            return None
        since = f"since {self.observed_at:%H:%M:%S}" if self.observed_at else "yet"
        return f"telemetry has not seen the job {since}: {self.blind_reason or 'telemetry is lagging'}"[:500]

    def _new_attempt(self, index: int, nodes: list[str]) -> AttemptTelemetry:
        self.layout_nodes = nodes or self.layout_nodes
        return AttemptTelemetry(
            index=index,
            analyzer=analyzer_for(self.layout_nodes, self.tasks_per_node),
            hang=HangBudget.for_attempt(self.policy, index),
        )

    def observe(self, job: JobSnapshot, now: datetime) -> list[JobEvent]:
        """Compare a fresh snapshot with what we know; return lifecycle events."""
        events: list[JobEvent] = []
        self.tasks_per_node = job.tasks_per_node or self.tasks_per_node
        cur = self.attempt
        if cur is None or job.restarts > cur.index:
            if cur is not None and cur.started_reported and not cur.ended_reported:
                events += self.final_digest(now)
                events.append(AttemptEnded(attempt=cur.index, state=JobState.REQUEUED, at=now, nodes=self.layout_nodes))
            cur = self.attempt = self._new_attempt(job.restarts, job.nodes)
        # COMPLETING right after a requeue belongs to the *old* attempt (Slurm already counts the restart)
        if job.state == JobState.RUNNING or (job.state.finished and job.start_time):  # noqa: SIM102 - two questions
            if not cur.started_reported and job.nodes:
                cur.started_reported = True
                self.layout_nodes = job.nodes
                cur.analyzer = analyzer_for(job.nodes, self.tasks_per_node)
                cur.hang = HangBudget.for_attempt(self.policy, cur.index)
                events.append(
                    AttemptStarted(
                        attempt=cur.index, nodes=job.nodes, excluded_nodes=job.excluded_nodes, at=job.start_time or now
                    )
                )
        suspended = job.state == JobState.SUSPENDED
        if cur.started_reported and suspended != cur.suspended:  # the hang watchdog pauses while suspended
            cur.suspended = suspended
            cur.resumed_at = None if suspended else now
            events.append(AttemptSuspension(attempt=cur.index, suspended=suspended, at=now))
        return events

    def finish(self, job: JobSnapshot, now: datetime, failed_nodes: list[str]) -> list[JobEvent]:
        """The attempt reached a final state: report any pending anomaly first, then the end."""
        cur = self.attempt
        if cur is None or cur.ended_reported or not job.state.finished:
            return []
        events = self.anomaly_events(now, force=True) + self.final_digest(now)
        cur.ended_reported = True
        events.append(
            AttemptEnded(
                attempt=cur.index,
                state=job.state,
                exit_code=job.exit_code,
                at=job.end_time or now,
                nodes=job.nodes,
                failed_nodes=failed_nodes,
            )
        )
        return events

    def feed(self, file: str, line_no: int, text: str, now: datetime) -> None:
        cur = self.attempt
        if cur is None:
            return
        sample = parse_progress(text)
        if sample is not None:
            self._record_progress(cur, sample, now)
        cur.analyzer.feed(file, line_no, text)
        if cur.first_failure_seen_at is None and cur.analyzer.candidates:
            cur.first_failure_seen_at = now

    @staticmethod
    def _record_progress(cur: AttemptTelemetry, sample: ProgressSample, now: datetime) -> None:
        cur.hang.observe(sample, now)
        if sample.event == ProgressEvent.CHECKPOINT_START:
            return
        if cur.first_progress_at is None and sample.event == ProgressEvent.STEP:
            cur.first_step, cur.first_progress_at = sample.step, now
        if sample.step is not None and (cur.step is None or sample.step > cur.step):
            cur.step = sample.step
        if sample.total_steps is not None:
            cur.total_steps = sample.total_steps
        if sample.checkpoint_step is not None:
            cur.checkpoint = max(sample.checkpoint_step, cur.checkpoint or sample.checkpoint_step)

    def anomaly_events(self, now: datetime, force: bool = False) -> list[JobEvent]:
        cur = self.attempt
        if cur is None or cur.anomaly_reported or cur.first_failure_seen_at is None:
            return []
        if not force and now - cur.first_failure_seen_at < SETTLE:
            return []
        diagnosis = cur.analyzer.diagnosis()
        if diagnosis.failure_kind == FailureKind.NONE or diagnosis.retry_advice is None:
            return []
        cur.anomaly_reported = True
        return [
            AnomalyDetected(
                anomaly=Anomaly(
                    attempt=cur.index,
                    kind=diagnosis.failure_kind,
                    diagnosis=diagnosis,
                    source="log",
                    observed_at=cur.first_failure_seen_at,
                )
            )
        ]

    def digest_interval(self) -> timedelta:
        """The keep-alive: a stepping job's digest at least this often (:data:`KEEP_ALIVE`, whatever the budget).
        Between keep-alives the hang clock is telemetry's own (:meth:`silence`); 10,000 quiet jobs cost a
        few signals per second (benchmarks/quiet_job_cost.py)."""
        return KEEP_ALIVE

    def resume_progress(self, attempt: int, at: datetime, step: int | None) -> bool:
        """A new telemetry term meets an attempt the term before had seen progress in: its hang clock starts at
        that term's last progress (``at``, when it read the line), not at a first progress line this term will
        never read (it reads on from the handed-over offsets). Only for the same attempt, and only before this
        term has read progress of its own; returns whether it took it."""
        cur = self.attempt
        if cur is None or cur.index != attempt or cur.last_progress_at is not None:
            return False
        cur.hang.last_progress_at = at
        cur.step = step
        return True

    def silence(self, now: datetime) -> datetime | None:
        """The start of a silence that has reached the attempt's hang budget by telemetry's clock; None when
        there is none. The clock runs from the last sign of life (a step or a checkpoint line; a resume is a
        fresh start) and, while telemetry cannot see the job, from when it last did: a blind telemetry cannot
        vouch for progress, so the workflow's check records a blind spell rather than a hang (only once the
        progress view says blind, :meth:`blindness`: else the check would find the silence vouched for). It does not run
        before the attempt's first progress (the workflow's own start-up watchdog covers that) nor while Slurm
        holds the attempt suspended."""
        cur = self.attempt
        if cur is None or not cur.started_reported or cur.ended_reported or cur.suspended:
            return None
        if cur.last_progress_at is None:
            return None
        since = max(t for t in (cur.last_progress_at, cur.resumed_at) if t is not None)
        budget = cur.hang.budget()
        if self.observed_at is not None and self.blindness(now, self.blind_after) is not None:
            since = min(since, self.observed_at)
            budget = max(budget, self.blind_after)
        return since if now - since >= budget else None

    def digest_events(self, now: datetime, interval: timedelta) -> list[JobEvent]:
        """Coarse progress: at once for the first progress, a new checkpoint, a phase or budget change, sight
        regained or a silence that reached the budget (once per silence); otherwise a keep-alive at most once
        per ``interval`` while the job steps."""
        cur = self.attempt
        if cur is None or not cur.started_reported or cur.last_progress_at is None:
            return []
        new_checkpoint = cur.checkpoint is not None and cur.checkpoint != cur.digest_checkpoint
        budget = cur.hang.budget()
        phase_changed = cur.checkpointing != cur.digest_checkpointing or _moved(budget, cur.digest_budget)
        stepped = cur.step != cur.digest_step
        due = cur.digest_sent_at is None or now - cur.digest_sent_at >= interval
        silence = self.silence(now)
        silent = silence is not None and silence != cur.silence_reported_for
        if not (new_checkpoint or phase_changed or (stepped and due) or self.sight_back or silent):
            return []
        if self.sight_back:
            cur.silence_reported_for = None  # seen again: a silence that goes on is reported afresh
            silent = silence is not None
        cur.digest_sent_at, cur.digest_step, cur.digest_checkpoint = now, cur.step, cur.checkpoint
        cur.digest_checkpointing, cur.digest_budget = cur.checkpointing, budget
        if silent:
            cur.silence_reported_for = silence
        self.sight_back = False
        return [
            ProgressDigest(
                attempt=cur.index,
                step=cur.step,
                last_progress_at=cur.last_progress_at,
                checkpoint=cur.checkpoint,
                max_step_interval=cur.max_step_interval,
                checkpointing=cur.checkpointing,
                hang_budget=budget,
                observed_at=self.observed_at,
                first_step=cur.first_step,
                first_progress_at=cur.first_progress_at,
                total_steps=cur.total_steps,
                hang_clock=True,
                silent=silent,
            )
        ]

    def final_digest(self, now: datetime) -> list[JobEvent]:
        """The attempt is ending: the last step and checkpoint seen, if the workflow has not heard them yet
        (the digests are throttled, so without this a completed attempt could show step 21 of 25)."""
        cur = self.attempt
        if cur is None or (cur.step == cur.digest_step and cur.checkpoint == cur.digest_checkpoint):
            return []
        return self.digest_events(now, timedelta(0))

    def progress_view(self, attempt: int, now: datetime, blind_after: timedelta) -> ProgressView:
        """The attempt's progress as telemetry knows it, with when it last saw the job and, if that was longer
        than ``blind_after`` ago, why it is blind to it."""
        cur, observed_at, blind = self.attempt, self.observed_at, self.blindness(now, blind_after)
        if cur is None or cur.index != attempt:
            return ProgressView(known=False, observed_at=observed_at, blind=blind)
        return ProgressView(
            known=True,
            step=cur.step,
            last_progress_at=cur.last_progress_at,
            checkpoint=cur.checkpoint,
            max_step_interval=cur.max_step_interval,
            checkpointing=cur.checkpointing,
            hang_budget=cur.hang.budget(),
            observed_at=observed_at,
            blind=blind,
            suspended=cur.suspended,
            first_step=cur.first_step,
            first_progress_at=cur.first_progress_at,
            total_steps=cur.total_steps,
        )
