"""The soak's seven invariants: pure functions of :class:`SoakData`, each giving how much it checked and every
violation in words (job, attempt, advice, node), the first of which the table shows as its example.

Sources: Temporal (each job workflow's status query: attempts, anomalies, advice with status and ``decided_by``;
the node ledger's view), Slurm (``sacct -D`` attempts and their nodes, the controller's restart count, holds,
ExcNodeList and drain reasons sampled during the run), and the soak's own records (what each job was meant to
do, every approval and rejection it sent).

Corroborated drains: the node ledger drains only with corroboration from outside the job and says which in the
drain reason (``...; corroborated: its node agent reports it failed``), in its record and in Slurm's reason.
:func:`corroborated_by` reads that (or a corroboration field, one of :data:`CORROBORATION_FIELDS`, or
implications from jobs of at least two distinct users) and names the source, so the table counts the drains by
how they were corroborated. A drain on one job's word (or one user's) is a violation.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.soak.models import DecisionSent, DrainSeen, InvariantResult, JobFacts, SoakData
from lazarus.models.recovery import Advice, AdviceAction, AdviceStatus, JobStatus, RecoveryState

# NOT_EXECUTED: decided, but re-checked at the moment of acting and left alone (the job had completed, was
# cancelled or had moved on); the advice records why. It is a terminal decision, and an approval it follows
# was heard.
TERMINAL_ADVICE = frozenset(
    {
        AdviceStatus.EXECUTED,
        AdviceStatus.REJECTED,
        AdviceStatus.EXPIRED,
        AdviceStatus.SUPERSEDED,
        AdviceStatus.FAILED,
        AdviceStatus.NOT_EXECUTED,
    }
)
APPROVED_OUTCOMES = frozenset(
    {
        AdviceStatus.APPROVED,
        AdviceStatus.EXECUTED,
        AdviceStatus.FAILED,
        AdviceStatus.SUPERSEDED,
        AdviceStatus.NOT_EXECUTED,
    }
)
ACTED = frozenset({AdviceStatus.APPROVED, AdviceStatus.EXECUTED})
CORROBORATION_FIELDS = ("corroboration", "corroborated_by", "corroborations")
CORROBORATION_SOURCES = (
    "the node agent",
    "Slurm's node state",
    "jobs of 2+ users",
    "evidence Lazarus read itself",
    "other evidence",
)
# the ledger's words (workflows/ledger_rules.py ``corroboration``) -> the source they name
_CITED = (
    ("node agent", CORROBORATION_SOURCES[0]),
    ("slurm shows", CORROBORATION_SOURCES[1]),
    (" users (", CORROBORATION_SOURCES[2]),
    ("evidence in job", CORROBORATION_SOURCES[3]),
)
SIGNAL_MARGIN = timedelta(seconds=5)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
JOB_IN_REASON = re.compile(r"\bin job (\d+)")


def _advice(status: JobStatus | None, generation: int | None) -> Advice | None:
    if status is None or generation is None:
        return None
    return next((a for a in status.advice_history if a.generation == generation), None)


def _restarts(f: JobFacts) -> int:
    """Slurm's restart count: accounting's attempts, or the controller's count when it shows more."""
    counted = max(len(f.slurm_attempts) - 1, 0)
    return max(counted, f.slurm_restarts or 0)


def _allocations(f: JobFacts) -> dict[int, set[str]]:
    """attempt index -> its nodes, from accounting and from the workflow (whichever knows them)."""
    alloc: dict[int, set[str]] = defaultdict(set)
    for a in f.slurm_attempts:
        alloc[a.index] |= set(a.nodes)
    for a in f.status.attempts if f.status else []:
        alloc[a.index] |= set(a.nodes)
    return alloc


def no_anomaly_without_terminal_decision(data: SoakData) -> InvariantResult:
    """Every recorded anomaly has advice that ended executed, not executed (re-checked and left alone, with the
    reason), rejected, expired, superseded or failed."""
    r = InvariantResult(name="no anomaly without a terminal decision", checked=0)
    for f in data.jobs:
        anomalous = [a for a in f.status.attempts if a.anomaly] if f.status else []
        r.checked += bool(anomalous)
        for a in anomalous:
            assert a.anomaly is not None
            what = f"job {f.plan.job_id} attempt {a.index}: {a.anomaly.kind.value} anomaly ({a.anomaly.source})"
            advice = _advice(f.status, a.advice_generation)
            if advice is None:
                r.violations.append(f"{what} with no advice (workflow {f.status.state.value})")  # type: ignore[union-attr]
            elif advice.status not in TERMINAL_ADVICE:
                r.violations.append(
                    f"{what}: advice {advice.generation} ({advice.action.value}) still {advice.status.value} at the end"
                )
    return r


def no_attempt_requeued_twice(data: SoakData) -> InvariantResult:
    """Slurm's restart count equals the requeues Lazarus recorded, and no attempt was requeued by two advices."""
    r = InvariantResult(name="no attempt requeued twice", checked=0)
    for f in data.jobs:
        if not f.slurm_attempts:
            continue
        r.checked += 1
        history = f.status.advice_history if f.status else []
        executed: dict[int, list[int]] = defaultdict(list)
        for a in history:
            if a.action == AdviceAction.RESTART and a.status == AdviceStatus.EXECUTED:
                executed[a.attempt].append(a.generation)
        requeued = sum(1 for a in f.status.attempts if a.requeued_at) if f.status else 0
        slurm = _restarts(f)
        job = f"job {f.plan.job_id}"
        for attempt, gens in sorted(executed.items()):
            if len(gens) > 1:
                r.violations.append(f"{job} attempt {attempt}: requeued by advices {gens}")
        if slurm > requeued:
            states = ",".join(a.state for a in f.slurm_attempts)
            r.violations.append(
                f"{job}: Slurm restarted it {slurm} time(s) (sacct attempts {states}), "
                f"Lazarus recorded {requeued} requeue(s)"
            )
        elif slurm < requeued:
            r.violations.append(f"{job}: Lazarus recorded {requeued} requeue(s), Slurm shows {slurm} restart(s)")
    return r


def no_job_held_past_its_deadline(data: SoakData) -> InvariantResult:
    """A job is held only while Lazarus acts on advice: never past the advice's decision deadline (plus a grace
    for the release to land), never without advice, and none at the end."""
    r = InvariantResult(name="no job held by Lazarus past its decision deadline", checked=len(data.jobs))
    facts = {f.plan.job_id: f for f in data.jobs}
    grace = timedelta(seconds=data.hold_grace_s)
    reported: set[int] = set()
    for sample in sorted(data.held, key=lambda s: s.at):
        f = facts.get(sample.job_id)
        if f is None or sample.job_id in reported:
            continue
        # advice made before Slurm answered may be why it answered "held"; the deadline runs from when it was asked
        made = [a for a in (f.status.advice_history if f.status else []) if a.created_at <= sample.at]
        when = f"{sample.at:%H:%M:%S}"
        if not made:
            reported.add(sample.job_id)
            r.violations.append(f"job {sample.job_id} held at {when} ({sample.reason}) with no advice from Lazarus")
            continue
        advice = made[-1]
        deadline = advice.expires_at or advice.created_at + timedelta(seconds=data.decision_timeout_s)
        if (sample.asked_at or sample.at) > deadline + grace:
            reported.add(sample.job_id)
            r.violations.append(
                f"job {sample.job_id} held at {when} ({sample.reason}), "
                f"{(sample.at - deadline).total_seconds():.0f} s past the deadline of advice "
                f"{advice.generation} ({advice.status.value})"
            )
    for sample in data.held_at_end:
        if sample.job_id not in reported:
            r.violations.append(f"job {sample.job_id} still held at the end ({sample.reason})")
    return r


def no_healthy_job_restarted_or_stopped(data: SoakData) -> InvariantResult:
    """Healthy and noisy jobs complete with 0 restarts and no restart or stop acted on; advice that nobody acted
    on is noted (a false alarm), not counted."""
    r = InvariantResult(name="no healthy job restarted or stopped", checked=0)
    false_alarms = []
    for f in data.jobs:
        if not f.plan.kind.healthy:
            continue
        r.checked += 1
        job = f"job {f.plan.job_id} ({f.plan.kind.value}, {f.plan.mode})"
        restarts = _restarts(f)
        acted = [
            a
            for a in (f.status.advice_history if f.status else [])
            if a.action != AdviceAction.NONE and a.status in ACTED
        ]
        unacted = [
            a
            for a in (f.status.advice_history if f.status else [])
            if a.action != AdviceAction.NONE and a.status not in ACTED
        ]
        if restarts:
            r.violations.append(f"{job}: restarted {restarts} time(s); {_advice_words(acted)}")
        elif acted:
            r.violations.append(f"{job}: {_advice_words(acted)}")
        elif (
            f.status
            and f.status.state == RecoveryState.STOPPED
            and f.status.stop_reason
            and not f.plan.cancelled_by_soak
            and f.final_state != "COMPLETED"
        ):
            r.violations.append(f"{job}: stopped ({f.status.stop_reason})")
        if unacted:
            false_alarms.append(f"{job}: {_advice_words(unacted)}")
    if false_alarms:
        r.note = f"{len(false_alarms)} false alarm(s) not acted on, e.g. {false_alarms[0]}"
    return r


def _advice_words(advices: list[Advice]) -> str:
    if not advices:
        return "no advice recorded"
    a = advices[0]
    return f"advice {a.generation} {a.action.value} ({a.status.value}, by {a.decided_by}): {a.reason}"


def no_stopped_job_keeps_its_allocation(data: SoakData) -> InvariantResult:
    """Stop means stop: a job whose stop advice Lazarus carried out gave its allocation back; the soak never had
    to cancel it at the end (the soak's policies keep the default ``on_stop: cancel``). A stop decided after the
    soak's own cancel is Lazarus reading that cancel back (``CANCELLED AT`` in the job's output), not a stop that
    left the job running: it does not count."""
    r = InvariantResult(name="no stopped job keeps its allocation", checked=0)
    for f in data.jobs:
        cancelled_at = f.plan.cancelled_at
        stops = [
            a
            for a in (f.status.advice_history if f.status else [])
            if a.action == AdviceAction.STOP
            and a.status == AdviceStatus.EXECUTED
            and (cancelled_at is None or a.created_at < cancelled_at)
        ]
        r.checked += bool(stops)
        if stops and f.plan.cancelled_by_soak:
            r.violations.append(
                f"job {f.plan.job_id}: stopped by advice {stops[-1].generation} ({stops[-1].reason}), "
                "but still running when the soak ended"
            )
    return r


def no_node_drained_without_corroboration(data: SoakData) -> InvariantResult:
    """Every drain Lazarus made cites evidence from outside the job (see the module docstring)."""
    drains = [d for d in _all_drains(data) if _by_lazarus(d)]
    r = InvariantResult(name="no node drained without corroboration", checked=len(drains), unit="drains")
    sources: Counter[str] = Counter()
    for d in drains:
        source = corroborated_by(d, data.users)
        if source is not None:
            sources[source] += 1
        else:
            record = d.ledger_record or {}
            jobs = sorted({i.get("job_id") for i in record.get("implications", [])} - {None})
            users = sorted(_users(record, data.users))
            r.violations.append(
                f"{d.node} drained at {d.first_seen:%H:%M:%S} ({d.reason!r}) on the word of "
                f"job(s) {jobs or '?'} of user(s) {users or '?'}; no corroboration in the ledger"
            )
    if sources:
        by = ", ".join(f"{n} by {source}" for source, n in sorted(sources.items(), key=_source_order))
        r.note = f"{sum(sources.values())} corroborated: {by}"
    return r


def _source_order(item: tuple[str, int]) -> int:
    return CORROBORATION_SOURCES.index(item[0]) if item[0] in CORROBORATION_SOURCES else len(CORROBORATION_SOURCES)


def _all_drains(data: SoakData) -> list[DrainSeen]:
    """Drains seen during the run, and Lazarus drains the ledger holds at the end that no sample saw."""
    drains = list(data.drains)
    seen = {d.node for d in drains}
    for record in (data.ledger or {}).get("nodes", []):
        if record.get("drained_by_lazarus") and record.get("node") not in seen:
            drains.append(
                DrainSeen(
                    node=record["node"],
                    reason=record.get("drain_reason") or "",
                    first_seen=record.get("drained_at") or EPOCH,
                    ledger_record=record,
                )
            )
    return drains


def _by_lazarus(d: DrainSeen) -> bool:
    record = d.ledger_record or {}
    if record.get("drained_by_lazarus"):
        return True
    operator = " via lazarus)" in d.reason or bool(record.get("drained_by"))
    return d.reason.lower().startswith("lazarus") and not operator


def _users(record: dict[str, Any], users: dict[int, str]) -> set[str]:
    found = {i.get("user") or users.get(i.get("job_id", -1), "") for i in record.get("implications", [])}
    return found - {"", None}


def corroborated_by(d: DrainSeen, users: dict[int, str]) -> str | None:
    """What corroborated a Lazarus drain (one of :data:`CORROBORATION_SOURCES`); None: one job's (or user's) word."""
    record = d.ledger_record or {}
    cited = " ".join([record.get("drain_reason") or "", d.reason]).lower()
    if "corroborated:" in cited:
        said = cited.split("corroborated:", 1)[1]
        for needle, source in _CITED:
            if needle in said:
                return source
        return CORROBORATION_SOURCES[-1]
    if any(record.get(k) for k in CORROBORATION_FIELDS):
        return CORROBORATION_SOURCES[-1]
    return CORROBORATION_SOURCES[2] if len(_users(record, users)) >= 2 else None


def no_node_outside_the_allocation_touched(data: SoakData) -> InvariantResult:
    """Advice excludes and drains only nodes of its attempt's allocation; a job's ExcNodeList (beyond what the
    soak itself excluded) and the ledger's implications and Lazarus's drains name only nodes the job ran on."""
    r = InvariantResult(name="no node outside a job's allocation touched", checked=len(data.jobs))
    facts = {f.plan.job_id: f for f in data.jobs}
    allocs = {job_id: _allocations(f) for job_id, f in facts.items()}
    for f in data.jobs:
        alloc = allocs[f.plan.job_id]
        kept = {a.index: set(a.excluded_nodes) for a in f.status.attempts} if f.status else {}
        for a in f.status.advice_history if f.status else []:
            ran_on = alloc.get(a.attempt, set())
            # a restart keeps the attempt's own ExcNodeList (the user's, or an earlier advice's): not a new touch
            outside = sorted(
                (set(a.exclude_nodes) - ran_on - kept.get(a.attempt, set())) | (set(a.drain_nodes) - ran_on)
            )
            if outside:
                r.violations.append(
                    f"job {f.plan.job_id} advice {a.generation} (attempt {a.attempt} on "
                    f"{sorted(ran_on)}) excludes/drains {outside}"
                )
    for sample in data.exclusions:
        f = facts.get(sample.job_id)
        if f is None:
            continue
        ran_on = set().union(*allocs[sample.job_id].values()) if allocs[sample.job_id] else set()
        outside = sorted(set(sample.nodes) - ran_on - {f.plan.outside_node})
        if outside:
            r.violations.append(
                f"job {sample.job_id}: ExcNodeList {sample.nodes} at {sample.at:%H:%M:%S} names "
                f"{outside}, never in its allocation"
            )
    _check_implications(data, allocs, r.violations.append)
    for d in _all_drains(data):
        match = JOB_IN_REASON.search(d.reason) if _by_lazarus(d) else None
        job_id = int(match.group(1)) if match else None
        if job_id in allocs and d.node not in set().union(*allocs[job_id].values()):
            r.violations.append(f"{d.node} drained ({d.reason!r}) but job {job_id} never ran on it")
    return r


def _check_implications(data: SoakData, allocs: dict[int, dict[int, set[str]]], report: Callable[[str], None]) -> None:
    records = [*(data.ledger or {}).get("nodes", []), *(d.ledger_record for d in data.drains if d.ledger_record)]
    seen: set[tuple[str, int, int]] = set()
    for record in records:
        for imp in record.get("implications", []):
            key = (record.get("node"), imp.get("job_id"), imp.get("attempt"))
            if key in seen or imp.get("job_id") not in allocs:
                continue
            seen.add(key)
            nodes = allocs[imp["job_id"]].get(imp.get("attempt"), set())
            if record.get("node") not in nodes:
                report(
                    f"ledger: job {imp['job_id']} attempt {imp.get('attempt')} (on {sorted(nodes)}) "
                    f"implicates {record.get('node')}"
                )


def no_approval_lost(data: SoakData) -> InvariantResult:
    """Every approval or rejection Temporal accepted shows in its advice: decided by that operator, with a
    status that follows from it. A signal is owed only if it arrived well before the deadline and the job had
    not moved on."""
    accepted = [d for d in data.decisions if d.accepted]
    r = InvariantResult(name="no approval lost", checked=len(accepted), unit="decisions")
    facts = {f.plan.job_id: f for f in data.jobs}
    for d in accepted:
        f = facts.get(d.job_id)
        advice = _advice(f.status if f else None, d.generation)
        what = f"job {d.job_id} advice {d.generation}: {d.verb} by {d.channel} at {d.sent_at:%H:%M:%S}"
        if advice is None:
            r.violations.append(f"{what}: the advice is not in the job's history")
        elif not _reflected(d, advice):
            r.violations.append(
                f"{what} accepted, but the advice is {advice.status.value} (decided by {advice.decided_by})"
            )
    refused = sum(1 for d in data.decisions if d.accepted is False)
    unknown = sum(1 for d in data.decisions if d.accepted is None)
    r.note = f"{len(data.decisions)} sent: {len(accepted)} accepted, {refused} refused, {unknown} cut off by faults"
    return r


def _decided_by(advice: Advice, operator: str) -> bool:
    """The advice records the operator's decision: as the operator, or (the caller's identity recorded, since
    approver authorization) with the operator's words as its note, e.g. ``root (note: chaos-approve-7-1-cli)``."""
    return advice.decided_by == operator or (advice.decided_by or "").endswith(f" (note: {operator})")


def _reflected(d: DecisionSent, advice: Advice) -> bool:
    if d.channel == "signal" and not _decided_by(advice, d.operator):
        late = d.expires_at is not None and d.sent_at + SIGNAL_MARGIN >= d.expires_at
        if late or advice.status == AdviceStatus.SUPERSEDED:
            return True  # the signal may have arrived after the deadline, or after the job moved on
    wanted = APPROVED_OUTCOMES if d.verb == "approve" else frozenset({AdviceStatus.REJECTED})
    return _decided_by(advice, d.operator) and advice.status in wanted


CHECKS = (
    no_anomaly_without_terminal_decision,
    no_attempt_requeued_twice,
    no_job_held_past_its_deadline,
    no_healthy_job_restarted_or_stopped,
    no_stopped_job_keeps_its_allocation,
    no_node_drained_without_corroboration,
    no_node_outside_the_allocation_touched,
    no_approval_lost,
)


def check_all(data: SoakData) -> list[InvariantResult]:
    return [check(data) for check in CHECKS]
