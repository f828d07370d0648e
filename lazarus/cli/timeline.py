"""Human rendering of a job's recovery history, with detection and action latencies, and how fresh each
attempt's progress view is."""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.models import milestones
from lazarus.models.recovery import Advice, Attempt, AttemptMilestones, HangBudgetInForce, JobStatus, RefusedAnswer

_PHASES = {
    "startup": "start-up, before the first progress line",
    "training": "training",
    "checkpoint": "checkpoint save",
}
_SOURCES = {"telemetry": "learned by telemetry", "policy": "the policy's rule, until telemetry reports"}


def _t(ts: datetime | None) -> str:
    return ts.strftime("%H:%M:%S") if ts else "--:--:--"


def _secs(a: datetime | None, b: datetime | None) -> str:
    return f"{(b - a).total_seconds():.1f} s" if a and b else "n/a"


def _freshness(attempt: Attempt) -> str:
    """How fresh the progress shown is: as of telemetry's last report on the attempt (its heartbeat, or the
    attempt's end), and when the last progress line was seen, if earlier. Telemetry reports progress coarsely
    (on a checkpoint, a phase or budget change, a silence, and a keep-alive every 25 minutes), and once more when
    the attempt ends."""
    seen, progress = attempt.observed_at, attempt.last_progress_at
    if progress is not None and (seen is None or seen - progress < timedelta(seconds=1)):
        return f" (as of {_t(progress)})"
    if seen is None:
        return ""
    return f" (as of {_t(seen)}{f'; last progress line at {_t(progress)}' if progress else ''})"


def attempt_lines(attempt: Attempt, status: JobStatus) -> list[str]:
    lines = [
        f"  attempt {attempt.index}: nodes {','.join(attempt.nodes) or '-'}"
        f"{' (excluding ' + ','.join(attempt.excluded_nodes) + ')' if attempt.excluded_nodes else ''}"
        f", started {_t(attempt.started_at)}, ended {_t(attempt.ended_at)}"
        f"{' ' + attempt.end_state.value if attempt.end_state else ''}"
        f"{f' exit {attempt.exit_code}' if attempt.exit_code is not None else ''}"
    ]
    lines.append(
        f"    progress: step {attempt.last_step if attempt.last_step is not None else '-'}, "
        f"checkpoint {attempt.last_checkpoint if attempt.last_checkpoint is not None else '-'}{_freshness(attempt)}"
    )
    for spell in attempt.blind_spells:
        lines.append(
            f"    blind {_t(spell.since)}-{_t(spell.until) if spell.until else 'now'} "
            f"({spell.seconds:.0f} s, {spell.checks} hang check(s) waited): {spell.reason}"
        )
    if attempt.anomaly:
        a, d = attempt.anomaly, attempt.anomaly.diagnosis
        lines.append(
            f"    anomaly: {a.kind.value} via {a.source}: {d.signature} ({d.category.value}), "
            f"nodes {','.join(d.implicated_nodes) or '-'}, confidence {d.confidence:.2f}; "
            f"recorded {_secs(a.observed_at, a.recorded_at)} after telemetry saw it"
        )
        for ev in d.evidence[:3]:
            lines.append(f"      {ev.file}:{ev.line_no}: {ev.text[:120]}")
        for note in d.notes[:3]:
            lines.append(f"      note: {note}")
    if attempt.advice_generation:
        adv = status.advice_history[attempt.advice_generation - 1]
        lines.append(
            f"    advice {adv.generation}: {adv.action.value} "
            f"{'excluding ' + ','.join(adv.exclude_nodes) if adv.exclude_nodes else ''} -> {adv.status.value}"
            f"{' by ' + adv.decided_by if adv.decided_by else ''}: {adv.reason}"
        )
        lines.extend(advice_notes(adv))
        nxt = next((b for b in status.attempts if b.index > attempt.index and b.started_at), None)
        if attempt.requeued_at:
            lines.append(
                f"    action latency: decision -> requeue verified {_secs(adv.decided_at, attempt.requeued_at)}"
                f", decision -> next attempt running {_secs(adv.decided_at, nxt.started_at if nxt else None)}"
            )
    if attempt.outcome:
        lines.append(f"    outcome: {attempt.outcome}")
    return lines


def _after(row: AttemptMilestones, at: datetime | None) -> str:
    seconds = row.since_fault(at)
    return f"{_t(at)}" + (f" (+{seconds:.1f} s)" if seconds is not None else "")


def milestone_line(row: AttemptMilestones, ended: str | None = None) -> str:
    """One attempt's milestones: fault → requeued → running → progress restored → completed, with the seconds
    from the fault; the checkpoint it resumed from and the steps lost. Running is not training. An attempt that
    ended otherwise (``ended``: its end state, e.g. FAILED) says so instead of a completion it never reached."""
    parts = (
        [f"fault {_t(row.fault_at)} ({row.fault})", f"requeued {_after(row, row.requeued_at)}"] if row.fault_at else []
    )
    progress = f"{'progress restored' if row.fault_at else 'training'} {_after(row, row.progress_restored_at)}"
    if row.first_step is not None:
        progress += f" at step {row.first_step}"
    if row.resumed_from is not None:
        lost = f", {row.steps_lost} steps lost" if row.steps_lost is not None else ""
        progress += f" (resumed from checkpoint {row.resumed_from}{lost})"
    end = f"ended {ended}" if ended and row.completed_at is None else f"completed {_after(row, row.completed_at)}"
    parts += [f"running {_after(row, row.running_at)}", progress, end]
    return "    milestones: " + " -> ".join(parts)


def with_milestones(status: JobStatus) -> JobStatus:
    """``status`` with its milestone rows (a worker older than the milestones returns none: read them here)."""
    if status.milestones or not status.attempts:
        return status
    return status.model_copy(update={"milestones": milestones.of(status.attempts)})


def advice_notes(adv: Advice) -> list[str]:
    """What became of the advice beyond its status: why it waited for a person in act mode, why it was not
    executed, whether its exclusions reached the new attempt."""
    lines = []
    if adv.monitor_reason:
        lines.append(f"    waited for approval: {adv.monitor_reason}")
    if adv.not_executed_reason:
        lines.append(f"    not executed: {adv.not_executed_reason}")
    if adv.exclusions_applied is True:
        lines.append(f"    exclusions applied: {','.join(adv.exclude_nodes)}")
    elif adv.exclusions_applied is False:
        lines.append(f"    exclusions not applied: {adv.not_applied_reason or 'reason not recorded'}")
    lines.extend(expedite_notes(adv))
    return lines


def expedite_notes(adv: Advice) -> list[str]:
    """Whether the restart went to the top of the queue (policy expedite), what Slurm shows, and the lift."""
    if adv.expedite_reason is None:
        return []
    lines = [f"    queue: {adv.expedite_reason}"]
    done = adv.expedited
    if done is not None:
        ahead = f", ahead of {len(done.ahead_of)} waiting job(s)" if done.ahead_of else ""
        what = (
            f"priority {done.priority_before} -> {done.priority_after}{ahead}"
            if done.done
            else f"not expedited: {done.reason}"
        )
        lines.append(f"    expedite (attempt {done.attempt}): {what}")
    if adv.expedite_lifted is not None:
        lines.append(f"    expedite lifted once it ran: {'yes' if adv.expedite_lifted else 'no'}")
    return lines


def hang_line(budget: HangBudgetInForce, deadline: datetime | None, telemetry_clock: bool = False) -> str:
    """The hang watchdog in force for the running attempt: its budget, where it comes from, when it fires (where
    telemetry keeps the clock, the silence it checks at once, and the workflow's backstop)."""
    fires = f"fires at {_t(deadline)}"
    if telemetry_clock:
        fires = f"kept by telemetry (a silence that long is checked at once); the backstop {fires}"
    return (
        f"  hang watchdog: budget {budget.budget.total_seconds():g} s ({_PHASES[budget.phase.value]}; "
        f"{_SOURCES[budget.source]}), {fires} unless progress comes first"
    )


def refused_line(refused: list[RefusedAnswer]) -> str:
    """The newest answer refused by the workflow (a signal is never refused to its sender)."""
    last = refused[-1]
    more = f"; {len(refused) - 1} earlier" if len(refused) > 1 else ""
    return f"  last refused answer ({_t(last.at)}{more}): {last.describe()}"


def render_timeline(status: JobStatus, link: str) -> str:
    out = [
        f"job {status.job_id} on {status.cluster}: {status.state.value} (mode {status.mode.value}, "
        f"policy {status.policy_name})"
    ]
    if status.stop_reason:
        out.append(f"  reason: {status.stop_reason}")
    out.extend(f"  note: {note}" for note in status.opt_in_notes)
    out.extend(f"  telemetry: {note}" for note in status.telemetry_notes)
    out.extend(f"  node ledger: {note}" for note in status.ledger_notes)
    if status.hang_budget:
        out.append(hang_line(status.hang_budget, status.hang_deadline, status.hang_clock))
    if status.refused_answers:
        out.append(refused_line(status.refused_answers))
    rows = {row.attempt: row for row in with_milestones(status).milestones}
    for attempt in status.attempts:
        out.extend(attempt_lines(attempt, status))
        if attempt.index in rows:
            ended = attempt.end_state.value if attempt.end_state and attempt.end_state.value != "COMPLETED" else None
            out.append(milestone_line(rows[attempt.index], ended))
    waiting = rows.get(status.attempts[-1].index + 1) if status.attempts else None
    if waiting is not None:
        out.append(f"  attempt {waiting.attempt}: requeued, not yet running")
        out.append(milestone_line(waiting))
    if status.advice and status.advice.status.value == "pending":
        out.append(
            f"  awaiting approval: lazarus advice approve {status.job_id} --generation {status.advice.generation}"
        )
    out.append(f"  history: {link}")
    return "\n".join(out)
