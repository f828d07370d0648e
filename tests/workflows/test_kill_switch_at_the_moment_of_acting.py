"""The kill switch fails closed (pure event path, no server).

Advice decided in act mode reads the cluster-wide mode from the node ledger right before acting: a kill
switch thrown after the job was discovered (which its workflow may never have been told) makes the advice
wait for a person, and so does a mode that cannot be read. An operator's approval is a person's decision
and needs no read.
"""

from __future__ import annotations

from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceStatus, Approval, ModeChange
from lazarus.models.recovery import RecoveryState as S
from tests.workflows.harness import T0, job_input, progress, started, xid79_on
from tests.workflows.test_transitions import feed, kinds
from workflows.effects import Answered, AwaitAnswer, CheckMode, Isolate, ModeChecked, Requeue

LEDGER = "lazarus-ledger-test"


def decided(mode: Mode = Mode.ACT):
    """Attempt 0 crashed with Xid 79 on node2; the job's workflow reports to a node ledger."""
    state = job_input(mode).model_copy(update={"ledger_workflow_id": LEDGER})
    return feed(state, started(0), progress(0, 10, T0, checkpoint=10), xid79_on("node2"))


def acted(effects) -> bool:
    return any(isinstance(e, (Isolate, Requeue)) for e in effects)


def test_act_mode_reads_the_kill_switch_before_touching_anything():
    state, effects = decided()
    assert isinstance(effects[-1], CheckMode) and effects[-1].ledger_workflow_id == LEDGER
    assert effects[-1].task_queue == state.scheduler_queue
    assert not acted(effects) and state.state == S.SUSPECTED


def test_no_override_acts():
    state, _ = decided()
    state, effects = feed(state, ModeChecked(mode=None))
    assert state.state == S.ACTING and kinds(effects)[-2:] == ["Isolate", "Requeue"]


def test_a_kill_switch_thrown_since_discovery_makes_the_advice_wait_for_a_person():
    state, _ = decided()
    state, effects = feed(state, ModeChecked(mode=Mode.MONITOR))
    advice = state.advice_history[0]
    assert not acted(effects) and state.state == S.AWAITING_APPROVAL
    assert state.cluster_mode == Mode.MONITOR and state.job_mode is None
    assert advice.status == AdviceStatus.PENDING and "kill switch" in advice.monitor_reason
    wait = next(e for e in effects if isinstance(e, AwaitAnswer))
    assert wait.wake_on_act and wait.timeout == state.policy.decision_timeout


def test_an_unreadable_mode_makes_the_advice_wait_for_a_person_whatever_the_jobs_mode():
    state, _ = decided()
    state, effects = feed(state, ModeChecked(error="workflow not found"))
    advice = state.advice_history[0]
    assert not acted(effects) and state.state == S.AWAITING_APPROVAL
    assert "could not be read (workflow not found)" in advice.monitor_reason
    wait = next(e for e in effects if isinstance(e, AwaitAnswer))
    assert not wait.wake_on_act  # the job's own act mode, unconfirmed, must not end the wait


def test_an_approval_of_advice_held_back_by_the_kill_switch_acts():
    state, _ = decided()
    state, _ = feed(state, ModeChecked(mode=Mode.MONITOR))
    state, effects = feed(state, Answered(Approval(generation=1, operator="alice")))
    assert state.state == S.ACTING and acted(effects) and state.advice_history[0].decided_by == "alice"


def test_a_workflow_that_began_before_the_read_existed_acts_as_it_did():
    state, _ = decided()
    state, effects = feed(state, ModeChecked(read=False))
    assert state.state == S.ACTING and acted(effects)


def test_a_job_without_a_ledger_acts_on_its_own_mode():
    _, effects = feed(job_input(Mode.ACT), started(0), xid79_on("node2"))
    assert not [e for e in effects if isinstance(e, CheckMode)] and acted(effects)


def test_monitor_mode_reads_nothing_and_waits():
    state, effects = decided(Mode.MONITOR)
    assert not [e for e in effects if isinstance(e, CheckMode)] and state.state == S.AWAITING_APPROVAL


def test_an_operators_act_for_this_job_after_the_kill_switch_stands_without_a_read():
    state = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": LEDGER})
    state, effects = feed(
        state,
        ModeChange(mode=Mode.MONITOR, scope="cluster"),
        ModeChange(mode=Mode.ACT, scope="job", operator="alice"),
        started(0),
        xid79_on("node2"),
    )
    assert state.state == S.ACTING and acted(effects) and not [e for e in effects if isinstance(e, CheckMode)]
    state, effects = feed(state, ModeChange(mode=Mode.MONITOR, scope="cluster"))
    assert not state.job_mode_by_operator  # a later kill switch wins again


def test_a_kill_switch_signal_that_did_reach_the_workflow_needs_no_read():
    state = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": LEDGER})
    state, effects = feed(state, ModeChange(mode=Mode.MONITOR, scope="cluster"), started(0), xid79_on("node2"))
    assert state.state == S.AWAITING_APPROVAL and not [e for e in effects if isinstance(e, CheckMode)]
