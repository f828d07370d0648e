"""The chaos soak's invariants (benchmarks/soak/invariants.py), each shown holding and failing on hand-made
facts: what Temporal's status query and Slurm's accounting would say about a few jobs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from benchmarks.soak import invariants as inv
from benchmarks.soak.models import (
    DecisionSent,
    DrainSeen,
    ExclusionSample,
    HeldSample,
    JobFacts,
    JobKind,
    JobPlan,
    SacctAttempt,
    SoakData,
)
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    Advice,
    AdviceAction,
    AdviceStatus,
    Anomaly,
    Attempt,
    JobStatus,
    RecoveryState,
)

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NODES = ["node1", "node2"]


def anomaly(attempt: int = 0, kind: FailureKind = FailureKind.CRASH) -> Anomaly:
    return Anomaly(
        attempt=attempt,
        kind=kind,
        source="log",
        observed_at=T0,
        diagnosis=Diagnosis(failure_kind=kind, category=Category.HARDWARE, signature="xid_79"),
    )


def advice(
    generation: int = 1,
    attempt: int = 0,
    status: AdviceStatus = AdviceStatus.EXECUTED,
    action: AdviceAction = AdviceAction.RESTART,
    exclude: list[str] | None = None,
    drain: list[str] | None = None,
    decided_by: str | None = "lazarus (act mode)",
    expires_at: datetime | None = None,
) -> Advice:
    return Advice(
        generation=generation,
        attempt=attempt,
        action=action,
        exclude_nodes=exclude or [],
        drain_nodes=drain or [],
        reason="test",
        status=status,
        created_at=T0,
        expires_at=expires_at,
        decided_by=decided_by,
    )


def facts(
    job_id: int = 1,
    kind: JobKind = JobKind.CRASH,
    attempts: list[Attempt] | None = None,
    advices: list[Advice] | None = None,
    sacct: list[list[str]] | None = None,
    state: RecoveryState = RecoveryState.COMPLETED,
    final: str = "COMPLETED",
    outside: str | None = None,
) -> JobFacts:
    attempts = attempts if attempts is not None else [Attempt(index=0, nodes=NODES)]
    sacct = sacct if sacct is not None else [a.nodes for a in attempts]
    status = JobStatus(
        cluster="lzchaos",
        job_id=job_id,
        state=state,
        mode=Mode.ACT,
        policy_name="soak",
        attempts=attempts,
        advice=(advices or [None])[-1],
        advice_history=advices or [],
    )
    plan = JobPlan(job_id=job_id, kind=kind, mode="act", fault="xid79", submitted_at=T0, outside_node=outside)
    return JobFacts(
        plan=plan,
        user="alice",
        workflow_status="COMPLETED",
        status=status,
        final_state=final,
        slurm_attempts=[SacctAttempt(index=i, state="COMPLETED", nodes=n) for i, n in enumerate(sacct)],
    )


def data(*jobs: JobFacts, **extra) -> SoakData:
    return SoakData(cluster="lzchaos", decision_timeout_s=40, hold_grace_s=30, jobs=list(jobs), **extra)


def requeued(index: int = 0, nodes: list[str] = NODES, **kw) -> Attempt:
    return Attempt(index=index, nodes=nodes, anomaly=anomaly(index), advice_generation=index + 1, requeued_at=T0, **kw)


# ---- no anomaly without a terminal decision ---------------------------------------------------


def test_an_anomaly_whose_advice_was_executed_has_a_terminal_decision():
    job = facts(attempts=[requeued(0), Attempt(index=1, nodes=["node3", "node4"])], advices=[advice()])
    assert inv.no_anomaly_without_terminal_decision(data(job)).passed


def test_an_anomaly_whose_advice_is_still_pending_at_the_end_is_a_violation():
    attempt = Attempt(index=0, nodes=NODES, anomaly=anomaly(), advice_generation=1)
    job = facts(attempts=[attempt], advices=[advice(status=AdviceStatus.PENDING)])
    result = inv.no_anomaly_without_terminal_decision(data(job))
    assert result.violations == ["job 1 attempt 0: crash anomaly (log): advice 1 (restart) still pending at the end"]


def test_an_anomaly_with_no_advice_at_all_is_a_violation():
    job = facts(attempts=[Attempt(index=0, nodes=NODES, anomaly=anomaly())], state=RecoveryState.SUSPECTED)
    assert "with no advice" in inv.no_anomaly_without_terminal_decision(data(job)).violations[0]


# ---- no attempt requeued twice ----------------------------------------------------------------


def test_one_recorded_requeue_per_slurm_restart_holds():
    job = facts(attempts=[requeued(0), Attempt(index=1, nodes=["node3", "node4"])], advices=[advice()])
    assert inv.no_attempt_requeued_twice(data(job)).passed


def test_a_slurm_restart_lazarus_did_not_record_is_a_violation():
    job = facts(attempts=[requeued(0)], advices=[advice()], sacct=[NODES, NODES, NODES])
    result = inv.no_attempt_requeued_twice(data(job))
    assert "Slurm restarted it 2 time(s)" in result.violations[0]


def test_two_executed_restarts_of_one_attempt_are_a_violation():
    job = facts(attempts=[requeued(0), Attempt(index=1, nodes=NODES)], advices=[advice(1), advice(2)])
    assert "attempt 0: requeued by advices [1, 2]" in inv.no_attempt_requeued_twice(data(job)).violations[0]


# ---- no job held past its decision deadline ---------------------------------------------------


def test_a_hold_while_acting_within_the_deadline_holds():
    job = facts(attempts=[requeued(0)], advices=[advice()])
    held = [HeldSample(job_id=1, at=T0 + timedelta(seconds=3), reason="JobHeldUser")]
    assert inv.no_job_held_past_its_deadline(data(job, held=held)).passed


def test_a_hold_past_the_deadline_and_grace_is_a_violation():
    job = facts(attempts=[requeued(0)], advices=[advice(expires_at=T0 + timedelta(seconds=40))])
    held = [HeldSample(job_id=1, at=T0 + timedelta(seconds=80), reason="JobHeldUser")]
    assert "40 s past the deadline of advice 1" in inv.no_job_held_past_its_deadline(data(job, held=held)).violations[0]


def test_a_hold_read_slowly_is_judged_kindly_between_the_asking_and_the_answer():
    # squeue asked at T0 while slurmctld was down; it answered at T0+8 s, after Lazarus's advice at T0+5 s
    f = facts(attempts=[requeued(0)], advices=[advice().model_copy(update={"created_at": T0 + timedelta(seconds=5)})])
    slow = HeldSample(job_id=1, asked_at=T0, at=T0 + timedelta(seconds=8), reason="JobHeldUser")
    assert inv.no_job_held_past_its_deadline(data(f, held=[slow])).passed
    # asked within the deadline and its grace, answered past them: the job may have been released in between
    g = facts(attempts=[requeued(0)], advices=[advice(expires_at=T0 + timedelta(seconds=40))])
    late = HeldSample(job_id=1, asked_at=T0 + timedelta(seconds=60), at=T0 + timedelta(seconds=75))
    assert inv.no_job_held_past_its_deadline(data(g, held=[late])).passed


def test_a_job_held_without_any_advice_or_still_held_at_the_end_is_a_violation():
    job = facts()
    result = inv.no_job_held_past_its_deadline(data(job, held_at_end=[HeldSample(job_id=1, at=T0)]))
    assert result.violations == ["job 1 still held at the end ()"]
    result = inv.no_job_held_past_its_deadline(data(job, held=[HeldSample(job_id=1, at=T0)]))
    assert "with no advice from Lazarus" in result.violations[0]


# ---- no healthy job restarted or stopped ------------------------------------------------------


def test_a_healthy_job_that_completed_untouched_holds():
    assert inv.no_healthy_job_restarted_or_stopped(data(facts(kind=JobKind.HEALTHY))).passed


def test_a_healthy_job_restarted_is_a_violation():
    job = facts(kind=JobKind.NOISY, attempts=[requeued(0), Attempt(index=1, nodes=NODES)], advices=[advice()])
    assert "restarted 1 time(s)" in inv.no_healthy_job_restarted_or_stopped(data(job)).violations[0]


def test_advice_on_a_healthy_job_that_nobody_acted_on_is_noted_not_counted():
    job = facts(kind=JobKind.HEALTHY, advices=[advice(status=AdviceStatus.REJECTED, decided_by="op")])
    result = inv.no_healthy_job_restarted_or_stopped(data(job))
    assert result.passed and result.note.startswith("1 false alarm(s)")


def test_a_finished_job_whose_silence_was_called_ending_not_hung_holds_every_invariant():
    # job 985's case after the fix: a hang call at its last step is advice none, executed; it completes in attempt 0
    ending = Attempt(
        index=0, nodes=NODES, last_step=30, total_steps=30, anomaly=anomaly(0, FailureKind.HANG), advice_generation=1
    )
    job = facts(kind=JobKind.NOISY, attempts=[ending], advices=[advice(action=AdviceAction.NONE)])
    assert inv.no_healthy_job_restarted_or_stopped(data(job)).passed
    assert inv.no_anomaly_without_terminal_decision(data(job)).passed


# ---- no stopped job keeps its allocation ------------------------------------------------------


def test_a_stopped_job_that_ended_before_the_soak_did_holds():
    job = facts(advices=[advice(action=AdviceAction.STOP)], state=RecoveryState.STOPPED, final="CANCELLED")
    result = inv.no_stopped_job_keeps_its_allocation(data(job))
    assert result.passed and result.checked == 1


def test_a_stopped_job_the_soak_had_to_cancel_is_a_violation():
    job = facts(advices=[advice(action=AdviceAction.STOP)], state=RecoveryState.STOPPED, final="CANCELLED")
    job = job.model_copy(update={"plan": job.plan.model_copy(update={"cancelled_by_soak": True})})
    [violation] = inv.no_stopped_job_keeps_its_allocation(data(job)).violations
    assert violation.startswith("job 1: stopped by advice 1") and "still running when the soak ended" in violation


def test_a_stop_that_reads_back_the_soaks_own_cancel_is_no_violation():
    """A hang job whose learned budget outlasted the soak's drain window was cancelled by the soak; Lazarus then
    read the ``CANCELLED AT`` line and stopped it (job 2060 of a CI run): that stop came after the cancel."""
    job = facts(advices=[advice(action=AdviceAction.STOP)], state=RecoveryState.STOPPED, final="CANCELLED")
    plan = job.plan.model_copy(update={"cancelled_by_soak": True, "cancelled_at": T0 - timedelta(seconds=1)})
    result = inv.no_stopped_job_keeps_its_allocation(data(job.model_copy(update={"plan": plan})))
    assert result.passed and result.checked == 0


def test_a_stop_made_before_the_soak_cancelled_the_job_still_counts():
    job = facts(advices=[advice(action=AdviceAction.STOP)], state=RecoveryState.STOPPED, final="CANCELLED")
    plan = job.plan.model_copy(update={"cancelled_by_soak": True, "cancelled_at": T0 + timedelta(seconds=30)})
    [violation] = inv.no_stopped_job_keeps_its_allocation(data(job.model_copy(update={"plan": plan}))).violations
    assert "still running when the soak ended" in violation


# ---- no node drained without corroboration ----------------------------------------------------


def drain(node: str = "node2", implications=((1, "alice"),), **record) -> DrainSeen:
    imps = [{"node": node, "job_id": job, "attempt": 0, "user": user} for job, user in implications]
    return DrainSeen(
        node=node,
        reason=f"lazarus: xid_79 in job {implications[0][0]}",
        first_seen=T0,
        ledger_record={"node": node, "drained_by_lazarus": True, "implications": imps, **record},
    )


def test_a_drain_on_one_jobs_word_is_a_violation():
    result = inv.no_node_drained_without_corroboration(data(facts(), drains=[drain()]))
    assert "node2 drained" in result.violations[0] and "no corroboration" in result.violations[0]


def test_a_drain_one_user_asked_for_through_several_jobs_is_still_one_word():
    result = inv.no_node_drained_without_corroboration(data(facts(), drains=[drain(implications=((1, "a"), (2, "a")))]))
    assert not result.passed


def test_a_drain_implicated_by_two_users_or_carrying_corroboration_holds():
    two_users = drain(implications=((1, "alice"), (2, "bob")))
    agent = drain(corroboration=[{"source": "node-agent", "detail": "Xid 79"}])
    assert inv.no_node_drained_without_corroboration(data(facts(), drains=[two_users, agent])).passed


def test_a_drain_the_ledger_says_the_node_agent_corroborated_holds_and_is_counted_by_its_source():
    reason = "lazarus: xid_79 in job 1 attempt 0; corroborated: its node agent reports it failed (Xid 79 on GPU 0)"
    agent = drain(drain_reason=reason)
    slurm = drain(node="node3", drain_reason="lazarus: lemon; corroborated: Slurm shows it DOWN* (Not responding)")
    two_users = drain(node="node4", implications=((1, "alice"), (2, "bob")))
    result = inv.no_node_drained_without_corroboration(data(facts(), drains=[agent, slurm, two_users]))
    assert result.passed and result.checked == 3
    assert result.note == "3 corroborated: 1 by the node agent, 1 by Slurm's node state, 1 by jobs of 2+ users"


def test_the_corroboration_the_slurm_reason_cites_counts_when_the_ledger_record_is_unreadable():
    seen = DrainSeen(
        node="node1",
        reason="lazarus: cuda_ecc_uncorrectable in job 9 attempt 0; corroborated: its node agent reports it failed",
        first_seen=T0,
    )
    assert inv.corroborated_by(seen, {}) == "the node agent"


def test_an_operators_drain_is_not_lazarus_s_to_corroborate():
    operator = DrainSeen(
        node="node3",
        reason="maintenance (by ops via lazarus)",
        first_seen=T0,
        ledger_record={"node": "node3", "drained_by": "ops", "implications": []},
    )
    result = inv.no_node_drained_without_corroboration(data(facts(), drains=[operator]))
    assert result.passed and result.checked == 0


# ---- no node outside a job's allocation touched -----------------------------------------------


def test_advice_that_excludes_and_drains_only_allocated_nodes_holds():
    job = facts(
        attempts=[requeued(0), Attempt(index=1, nodes=["node1", "node3"], excluded_nodes=["node2"])],
        advices=[advice(exclude=["node2"], drain=["node2"])],
    )
    exclusions = [ExclusionSample(job_id=1, at=T0, nodes=["node2"])]
    assert inv.no_node_outside_the_allocation_touched(data(job, exclusions=exclusions)).passed


def test_advice_that_excludes_a_node_outside_the_attempt_is_a_violation():
    job = facts(attempts=[requeued(0)], advices=[advice(exclude=["node4"])])
    result = inv.no_node_outside_the_allocation_touched(data(job))
    assert result.violations == ["job 1 advice 1 (attempt 0 on ['node1', 'node2']) excludes/drains ['node4']"]


def test_a_restart_that_keeps_the_users_own_exclusion_holds_but_the_ledger_must_not_blame_it():
    attempt = requeued(0, excluded_nodes=["node4"])  # sbatch --exclude=node4, kept by the restart
    job = facts(attempts=[attempt], advices=[advice(exclude=["node4"])], outside="node4")
    exclusions = [ExclusionSample(job_id=1, at=T0, nodes=["node4"])]
    assert inv.no_node_outside_the_allocation_touched(data(job, exclusions=exclusions)).passed
    ledger = {"nodes": [{"node": "node4", "implications": [{"job_id": 1, "attempt": 0}]}]}
    result = inv.no_node_outside_the_allocation_touched(data(job, ledger=ledger))
    assert result.violations == ["ledger: job 1 attempt 0 (on ['node1', 'node2']) implicates node4"]


def test_a_lazarus_drain_of_a_node_the_job_never_ran_on_is_a_violation():
    result = inv.no_node_outside_the_allocation_touched(data(facts(), drains=[drain(node="node4")]))
    assert "node4 drained ('lazarus: xid_79 in job 1') but job 1 never ran on it" in result.violations


# ---- no approval lost -------------------------------------------------------------------------


def decision(
    verb: str = "approve",
    channel: str = "update",
    accepted: bool | None = True,
    sent: datetime = T0,
    expires: datetime | None = None,
) -> DecisionSent:
    return DecisionSent(
        job_id=1,
        generation=1,
        verb=verb,
        channel=channel,
        operator="op-1",
        sent_at=sent,
        expires_at=expires,
        accepted=accepted,
    )


def test_an_accepted_approval_that_the_advice_shows_holds():
    job = facts(advices=[advice(decided_by="op-1")])
    assert inv.no_approval_lost(data(job, decisions=[decision()])).passed


def test_an_approval_recorded_as_the_caller_with_the_operators_note_holds():
    job = facts(advices=[advice(decided_by="root (note: op-1)")])
    assert inv.no_approval_lost(data(job, decisions=[decision()])).passed
    other = facts(advices=[advice(decided_by="root (note: op-2)")])
    assert not inv.no_approval_lost(data(other, decisions=[decision()])).passed


def test_an_accepted_approval_that_ended_expired_is_lost():
    job = facts(advices=[advice(status=AdviceStatus.EXPIRED, decided_by=None)])
    result = inv.no_approval_lost(data(job, decisions=[decision(verb="reject", channel="cli")]))
    assert "accepted, but the advice is expired" in result.violations[0]


def test_a_refused_or_unknown_decision_is_not_owed_and_a_late_signal_may_miss():
    job = facts(advices=[advice(status=AdviceStatus.EXPIRED, decided_by=None)])
    late = decision(channel="signal", sent=T0 + timedelta(seconds=38), expires=T0 + timedelta(seconds=40))
    decisions = [decision(accepted=False), decision(accepted=None), late]
    assert inv.no_approval_lost(data(job, decisions=decisions)).passed
