"""Stored workflow histories still replay: a change to workflow code that would break running workflows
(non-determinism) fails here, naming the history, before it is deployed.

tests/histories holds histories recorded with the current code (``<name>.json``, one per scenario of
tests/workflows/scenarios.py) and with older revisions' code (``<name>@<rev>.json``): the latter are workflows
that were running when that code was replaced, so every ``workflow.patched`` id must be replayed by one of
them (the old branch) as well as by a current one (the new branch). Record with scripts/record_histories.py;
CONTRIBUTING.md ("Workflow histories") says when.
"""

from __future__ import annotations

import json
from base64 import b64decode
from collections import defaultdict
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner

from lazarus.models import names
from tests.workflows.patch_ids import patch_ids_in
from tests.workflows.scenarios import SCENARIOS
from workflows.callers import CallerInterceptor
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow
from workflows.telemetry_lease import TelemetryLeaseWorkflow

HISTORIES = sorted((Path(__file__).parents[1] / "histories").glob("*.json"))
CURRENT = [p for p in HISTORIES if "@" not in p.stem]
WORKFLOWS = [JobRecoveryWorkflow, NodeLedgerWorkflow, TelemetryLeaseWorkflow]
WORKFLOW_CODE = Path(__file__).parents[2] / "workflows"


def events(path: Path) -> list[dict]:
    return json.loads(path.read_text())["events"]


def workflow_type(path: Path) -> str:
    return events(path)[0]["workflowExecutionStartedEventAttributes"]["workflowType"]["name"]


def fired_timers(path: Path) -> list[str]:
    """The summaries of the timers that fired in this history ('' for a timer without one)."""
    started = {e["eventId"]: e for e in events(path) if e["eventType"] == "EVENT_TYPE_TIMER_STARTED"}
    summaries = []
    for e in events(path):
        if e["eventType"] == "EVENT_TYPE_TIMER_FIRED":
            summary = started[e["timerFiredEventAttributes"]["startedEventId"]].get("userMetadata", {}).get("summary")
            summaries.append(json.loads(b64decode(summary["data"])) if summary else "")
    return summaries


def has_event(path: Path, event_type: str, name: str | None = None) -> bool:
    for e in events(path):
        if e["eventType"] != f"EVENT_TYPE_{event_type}":
            continue
        if name is None:
            return True
        if e.get("workflowExecutionSignaledEventAttributes", {}).get("signalName") == name:
            return True
        accepted = e.get("workflowExecutionUpdateAcceptedEventAttributes", {})
        if accepted.get("acceptedRequest", {}).get("input", {}).get("name") == name:
            return True
    return False


def test_every_scenario_has_its_stored_history_and_nothing_else_is_current():
    kept = {name for s in SCENARIOS for name in s.keeps}
    assert {p.stem for p in CURRENT} == kept, "re-record: .venv/bin/python scripts/record_histories.py"


def test_each_stored_history_is_of_a_workflow_the_replay_runs():
    known = {names.JOB_WORKFLOW, names.LEDGER_WORKFLOW, names.TELEMETRY_LEASE_WORKFLOW}
    assert {p.name: workflow_type(p) for p in HISTORIES if workflow_type(p) not in known} == {}


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_stored_history_replays_with_the_current_workflow_code(path: Path):
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    replayer = Replayer(  # sandboxed and intercepted (the caller of each message), as workers run
        workflows=WORKFLOWS, data_converter=pydantic_data_converter, interceptors=[CallerInterceptor()]
    )
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    if result.replay_failure is not None:
        pytest.fail(
            f"tests/histories/{path.name} ({workflow_type(path)}) no longer replays with the current "
            f"workflow code, so running workflows like it would break: {result.replay_failure}. Put the "
            "change behind workflow.patched (CONTRIBUTING.md, 'Workflow histories').",
            pytrace=False,
        )


def test_current_histories_fire_every_watchdog_timer():
    fired = {summary.split(" (")[0] for p in CURRENT for summary in fired_timers(p)}
    assert {"hang watchdog", "decision watchdog", "attempt-start watchdog"} <= fired
    assert any(fired_timers(p) for p in CURRENT if workflow_type(p) == names.LEDGER_WORKFLOW)  # reconciliation


def test_current_histories_continue_as_new_and_start_from_a_carried_record():
    for kind in (names.JOB_WORKFLOW, names.LEDGER_WORKFLOW):
        mine = [p for p in CURRENT if workflow_type(p) == kind]
        assert any(has_event(p, "WORKFLOW_EXECUTION_CONTINUED_AS_NEW") for p in mine), kind
        assert any(
            events(p)[0]["workflowExecutionStartedEventAttributes"].get("continuedExecutionRunId") for p in mine
        ), kind


def test_current_histories_answer_advice_by_update_and_by_signal_and_drive_the_ledger():
    job = [p for p in CURRENT if workflow_type(p) == names.JOB_WORKFLOW]
    for answer in (names.APPROVE_ADVICE, names.REJECT_ADVICE):
        assert any(has_event(p, "WORKFLOW_EXECUTION_UPDATE_ACCEPTED", answer) for p in job), answer
        assert any(has_event(p, "WORKFLOW_EXECUTION_SIGNALED", answer) for p in job), answer
    assert any(has_event(p, "WORKFLOW_EXECUTION_SIGNALED", names.SET_MODE) for p in job)
    assert any(has_event(p, "SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED") for p in job)  # to the ledger
    ledger = [p for p in CURRENT if workflow_type(p) == names.LEDGER_WORKFLOW]
    for message in (names.RECORD_IMPLICATION, names.SET_LEDGER_POLICY, names.SET_CLUSTER_MODE):
        assert any(has_event(p, "WORKFLOW_EXECUTION_SIGNALED", message) for p in ledger), message
    for update in (names.DRAIN_NODE, names.RESUME_NODE):
        assert any(has_event(p, "WORKFLOW_EXECUTION_UPDATE_ACCEPTED", update) for p in ledger), update


def test_stored_histories_carry_events_by_the_old_generic_signal_and_by_each_named_one():
    job = [p for p in HISTORIES if workflow_type(p) == names.JOB_WORKFLOW]
    assert any(has_event(p, "WORKFLOW_EXECUTION_SIGNALED", names.JOB_EVENT) for p in job)  # running before
    current = [p for p in CURRENT if workflow_type(p) == names.JOB_WORKFLOW]
    for signal in names.EVENT_SIGNALS.values():
        assert any(has_event(p, "WORKFLOW_EXECUTION_SIGNALED", signal) for p in current), signal


@pytest.mark.asyncio(loop_scope="session")
async def test_every_patch_is_replayed_by_a_history_from_before_it_and_one_from_after(monkeypatch):
    answers: dict[str, dict[bool, list[str]]] = defaultdict(lambda: {False: [], True: []})
    replaying: list[str] = []
    real = workflow.patched

    def recording(patch_id: str) -> bool:
        answer = real(patch_id)
        answers[patch_id][answer].append(replaying[-1])
        return answer

    monkeypatch.setattr(workflow, "patched", recording)
    replayer = Replayer(
        workflows=WORKFLOWS,
        data_converter=pydantic_data_converter,
        workflow_runner=UnsandboxedWorkflowRunner(),
        interceptors=[CallerInterceptor()],
    )
    for path in HISTORIES:
        replaying.append(path.name)
        history = WorkflowHistory.from_json(path.stem, path.read_text())
        await replayer.replay_workflow(history, raise_on_replay_failure=False)  # failures: the test above
    ids = patch_ids_in(WORKFLOW_CODE)
    assert ids, "no workflow.patched call found: the scan is broken"
    for patch_id in sorted(ids):
        assert answers[patch_id][False], (
            f"no stored history recorded before patch {patch_id!r} reaches it: record "
            "one with scripts/record_histories.py --rev <the revision before it>"
        )
        assert answers[patch_id][True], f"no stored history recorded after patch {patch_id!r} reaches it"
