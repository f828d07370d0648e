"""Activity options are declared once (workflows/options.py) and every heartbeat timeout outlasts the
slowest stretch of Slurm commands its activity runs between two heartbeats."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from lazarus.config import SchedulerSettings
from lazarus.models.slurm import CancelRequest, JobSnapshot, JobState, NodeState, RestartRequest
from lazarus.slurm.cancel import cancel_attempt
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.restart import restart_excluding
from workflows.options import (
    PRESETS,
    RESTART_COMMANDS_BETWEEN_HEARTBEATS,
    SLURM_CANCEL,
    SLURM_COMMAND_TIMEOUT,
    SLURM_RESTART,
)

WORKFLOWS = Path(__file__).resolve().parents[2] / "workflows"
_AD_HOC = {
    "start_to_close_timeout",
    "schedule_to_close_timeout",
    "schedule_to_start_timeout",
    "heartbeat_timeout",
    "retry_policy",
}


def _activity_calls():
    for path in sorted(WORKFLOWS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _called(node) in {"execute_activity", "run_activity"}:
                yield path.name, node


def _called(call: ast.Call) -> str | None:
    return getattr(call.func, "attr", None) or getattr(call.func, "id", None)


def test_every_activity_call_in_the_workflows_takes_a_preset_and_sets_no_timeout_of_its_own():
    """Workflow code calls activities through ``calls.run_activity`` (typed; it takes one preset and no
    timeouts); the one ``execute_activity`` is that helper's own, which spreads the preset it was given."""
    calls = list(_activity_calls())
    direct = [(name, call) for name, call in calls if _called(call) == "execute_activity"]
    assert [name for name, _ in direct] == ["calls.py"], "only calls.run_activity calls execute_activity"
    helper = [(name, call) for name, call in calls if _called(call) == "run_activity"]
    assert len(helper) >= 6
    for name, call in helper:
        preset = [k.value.id for k in call.keywords if k.arg == "preset" and isinstance(k.value, ast.Name)]
        assert len(preset) == 1 and preset[0] in PRESETS, f"{name}:{call.lineno} uses no preset"
        assert not any(k.arg is None for k in call.keywords), f"{name}:{call.lineno} spreads options of its own"
    for name, call in calls:
        assert not {k.arg for k in call.keywords} & _AD_HOC, f"{name}:{call.lineno} sets its own options"


def test_the_command_timeout_assumed_is_the_slurm_adapters():
    default = inspect.signature(SlurmClient.__init__).parameters["command_timeout"].default
    assert (
        SLURM_COMMAND_TIMEOUT.total_seconds() == default == SchedulerSettings.model_fields["command_timeout_s"].default
    )


class _CountingClient:
    """Just enough of SlurmClient for the restart, with one job whose state follows the commands; it counts
    the commands run since the last heartbeat."""

    verify_timeout = 1.0

    def __init__(self, job: JobSnapshot) -> None:
        self.state, self.since_beat, self.most = job, 0, 0

    def _command(self) -> None:
        self.since_beat += 1
        self.most = max(self.most, self.since_beat)

    def heartbeat(self, _detail: str) -> None:
        self.since_beat = 0

    async def nodes(self) -> list[NodeState]:
        self._command()
        return [NodeState(name=n, state="IDLE") for n in ("node1", "node2", "node3")]

    async def job(self, job_id: int) -> JobSnapshot:
        self._command()
        return self.state.model_copy()

    async def run(self, argv: list[str], subject: str) -> None:
        self._command()
        s = self.state
        if argv[0] == "scancel":
            s.state = JobState.CANCELLED
        elif argv[1] == "requeuehold":
            s.restarts, s.state, s.held, s.nodes = s.restarts + 1, JobState.PENDING, True, []
            s.state_reason = "job_requeued_in_held_state"
        elif argv[1] == "hold":
            s.held, s.state_reason = True, "JobHeldAdmin"
        elif argv[1] == "release":
            s.held, s.state_reason = False, ""
        elif argv[1] == "update":
            s.excluded_nodes = ["node2"]


@pytest.mark.parametrize(
    "job",
    [
        JobSnapshot(job_id=7, state=JobState.RUNNING, nodes=["node1", "node2"]),  # the usual restart
        JobSnapshot(job_id=7, state=JobState.PENDING, restarts=1),  # a retry: requeued already, not held
        JobSnapshot(
            job_id=7,
            state=JobState.PENDING,
            restarts=1,
            held=True,  # a retry: requeued and held
            state_reason="job_requeued_in_held_state",
        ),
        JobSnapshot(job_id=7, state=JobState.PENDING),  # still pending for its first run
    ],
    ids=["running", "requeued-not-held", "requeued-held", "pending"],
)
@pytest.mark.asyncio
async def test_the_restart_runs_no_more_commands_between_heartbeats_than_its_preset_allows_for(job):
    client = _CountingClient(job)
    await restart_excluding(
        client, RestartRequest(job_id=7, expected_attempt=0, exclude_nodes=["node2"]), heartbeat=client.heartbeat
    )
    assert 0 < client.most <= RESTART_COMMANDS_BETWEEN_HEARTBEATS


@pytest.mark.parametrize(
    "job",
    [
        JobSnapshot(job_id=7, state=JobState.RUNNING, nodes=["node1", "node2"]),  # the usual stop of a hung job
        JobSnapshot(job_id=7, state=JobState.CANCELLED),  # a retry after the cancel
        JobSnapshot(job_id=7, state=JobState.FAILED, exit_code=1),  # ended on its own
    ],
    ids=["running", "cancelled", "ended"],
)
@pytest.mark.asyncio
async def test_the_stops_cancel_runs_no_more_commands_between_heartbeats_than_its_preset_allows_for(job):
    client = _CountingClient(job)
    await cancel_attempt(client, CancelRequest(job_id=7, expected_attempt=0), heartbeat=client.heartbeat)
    assert 0 < client.most <= RESTART_COMMANDS_BETWEEN_HEARTBEATS


def test_every_heartbeat_timeout_outlasts_the_slowest_command_stretch_and_fits_in_its_activity():
    for preset in (SLURM_RESTART, SLURM_CANCEL):
        assert preset["heartbeat_timeout"] > SLURM_COMMAND_TIMEOUT * RESTART_COMMANDS_BETWEEN_HEARTBEATS
        assert preset["start_to_close_timeout"] > preset["heartbeat_timeout"]
    heartbeating = [name for name, preset in PRESETS.items() if preset.get("heartbeat_timeout")]
    assert heartbeating == ["SLURM_RESTART", "SLURM_CANCEL"]
