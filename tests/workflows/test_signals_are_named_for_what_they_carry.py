"""Each kind of job event has a signal named for what it carries, so the Temporal UI's timeline reads as the
job's story (``attempt_started``, ``progress``, ``anomaly``, ``attempt_ended``, ...); the generic ``job_event``
signal that carried them all before still works, for workflows that were running when telemetry changed."""

from __future__ import annotations

from datetime import timedelta
from typing import get_args

import pytest
from temporalio import workflow
from temporalio.api.enums.v1 import EventType

from lazarus.models import names
from lazarus.models.recovery import (
    JobEvent,
    JobEventEnvelope,
    LedgerNote,
    RecoveryState,
    TelemetryNote,
    event_signal,
)
from lazarus.models.slurm import JobState
from tests.workflows.harness import T0, Running, ended, job_input, progress, started, xid79_on
from workflows.job_recovery import JobRecoveryWorkflow


def _event_types() -> list[str]:
    union = get_args(JobEvent)[0]
    return [cls.model_fields["type"].default for cls in get_args(union)]


def _recovery_story() -> list:
    return [
        started(0),
        progress(0, 100, T0, checkpoint=100),
        TelemetryNote(text="log file refused"),
        xid79_on("node2"),
        ended(0),
        started(1, nodes=("node1", "node3"), excluded=("node2",)),
        LedgerNote(text="node2 drain waits for corroboration"),
        progress(1, 200, T0 + timedelta(minutes=1), checkpoint=200),
        ended(1, JobState.COMPLETED, 0),
    ]


def test_every_kind_of_event_has_a_signal_of_its_own():
    assert sorted(names.EVENT_SIGNALS) == sorted(_event_types())
    assert len(set(names.EVENT_SIGNALS.values())) == len(names.EVENT_SIGNALS)
    assert names.JOB_EVENT not in names.EVENT_SIGNALS.values()


def test_the_job_workflow_handles_each_named_signal_and_still_the_generic_one():
    defn = workflow._Definition.must_from_class(JobRecoveryWorkflow)
    assert set(names.EVENT_SIGNALS.values()) | {names.JOB_EVENT} <= set(defn.signals)
    for name in names.EVENT_SIGNALS.values():  # each handler is named like its signal (the tests' harness uses it)
        assert defn.signals[name].fn.__name__ == name


def test_a_signal_is_named_for_the_event_it_carries():
    assert [event_signal(e) for e in _recovery_story()] == [
        "attempt_started",
        "progress",
        "telemetry_note",
        "anomaly",
        "attempt_ended",
        "attempt_started",
        "ledger_note",
        "progress",
        "attempt_ended",
    ]


@pytest.mark.asyncio(loop_scope="session")
async def test_a_recovery_told_by_named_signals_ends_as_one_told_by_job_event(ts_env):
    outcomes = []
    for by_name in (True, False):
        async with Running(ts_env.client, job_input()) as run:
            for event in _recovery_story():
                if by_name:
                    await run.handle.signal(event_signal(event), event)
                else:
                    await run.handle.signal(names.JOB_EVENT, JobEventEnvelope(event=event))
            status = await run.handle.result()
        outcomes.append(status)
        history = await run.handle.fetch_history()
        signals = [
            e.workflow_execution_signaled_event_attributes.signal_name
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
        ]
        assert signals == ([event_signal(e) for e in _recovery_story()] if by_name else ["job_event"] * 9)
    named, generic = outcomes
    assert named.state == generic.state == RecoveryState.COMPLETED
    assert [a.index for a in named.attempts] == [a.index for a in generic.attempts] == [0, 1]
    assert named.telemetry_notes == generic.telemetry_notes == ["log file refused"]
    assert named.ledger_notes == generic.ledger_notes == ["node2 drain waits for corroboration"]
    assert [a.exclude_nodes for a in named.advice_history] == [a.exclude_nodes for a in generic.advice_history]
