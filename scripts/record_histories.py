"""Record workflow histories for the replay tests (tests/workflows/test_replay.py).

Run after an *intentional* change to workflow code that is made safe with
``workflow.patched`` (or when adding scenarios); never to paper over a replay
failure, which means the change would break running workflows.

    .venv/bin/python scripts/record_histories.py                        # every scenario
    .venv/bin/python scripts/record_histories.py monitor_mode_notifies  # only these (new ones)

Record only the scenarios you add: re-recording an old one with new code replaces the proof that
histories written by the old code still replay.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from temporalio.testing import WorkflowEnvironment  # noqa: E402

from lazarus.models.policy import Mode  # noqa: E402
from lazarus.models.recovery import Approval, Rejection  # noqa: E402
from lazarus.models.slurm import JobState  # noqa: E402
from tests.workflows.conftest import register_search_attributes  # noqa: E402
from tests.workflows.harness import T0, Running, app_error, ended, job_input, progress, send, started, xid79_on  # noqa: E402
from workflows.job_recovery import JobRecoveryWorkflow  # noqa: E402

OUT = REPO / "tests" / "histories"


async def act_mode_restart(client) -> Running:
    run = Running(client, job_input(Mode.ACT))
    async with run:
        await send(run.handle, started(0), progress(0, 10, T0, checkpoint=10), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        await run.handle.result()
    return run


async def monitor_mode_approved(client) -> Running:
    run = Running(client, job_input(Mode.MONITOR))
    async with run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        for _ in range(100):
            status = await run.handle.query(JobRecoveryWorkflow.status)
            if status.advice and status.state.value == "awaiting-approval":
                break
            await asyncio.sleep(0.05)
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        await run.handle.result()
    return run


async def monitor_mode_expired(client) -> Running:
    run = Running(client, job_input(Mode.MONITOR, decision_timeout=timedelta(minutes=5)))
    async with run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await run.handle.result()
    return run


async def application_error(client) -> Running:
    run = Running(client, job_input(Mode.ACT))
    async with run:
        await send(run.handle, started(0), app_error(), ended(0))
        await run.handle.result()
    return run


async def monitor_mode_notifies(client) -> Running:
    """Advice awaiting approval and the stop after its rejection, each posted as a notice (activity ``notify``)."""
    run = Running(client, job_input(Mode.MONITOR))
    async with run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        for _ in range(100):
            status = await run.handle.query(JobRecoveryWorkflow.status)
            if status.advice and status.state.value == "awaiting-approval":
                break
            await asyncio.sleep(0.05)
        await run.handle.execute_update(JobRecoveryWorkflow.reject_advice, Rejection(generation=1, operator="bob"))
        await run.handle.result()
    return run


SCENARIOS = [act_mode_restart, monitor_mode_approved, monitor_mode_expired, application_error, monitor_mode_notifies]


async def main() -> None:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(Path(sys.executable).parent / "temporal-test-server"),
        data_converter=pydantic_data_converter,
    )
    await register_search_attributes(env.client)
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        chosen = set(sys.argv[1:])
        unknown = chosen - {s.__name__ for s in SCENARIOS}
        if unknown:
            raise SystemExit(f"unknown scenarios: {', '.join(sorted(unknown))}")
        for scenario in [s for s in SCENARIOS if not chosen or s.__name__ in chosen]:
            run = await scenario(env.client)
            history = await run.handle.fetch_history()
            (OUT / f"{scenario.__name__}.json").write_text(history.to_json())
            print(f"recorded {scenario.__name__}: {len(history.events)} events")
    finally:
        await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
