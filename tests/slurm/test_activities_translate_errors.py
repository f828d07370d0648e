"""The scheduler activities, run through Temporal's ActivityEnvironment: typed errors become ApplicationErrors.

Permanent errors are non-retryable with the error's name as ``type``; an
unreachable controller stays retryable. The controller-down case uses a copy
of the test cluster's slurm.conf that points at a port nobody listens on
(MessageTimeout=1, so it fails at once), leaving the shared cluster alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.scheduler import SlurmActivities, error_type
from lazarus.models.slurm import JobState, NodeAction, RestartRequest
from lazarus.slurm import errors
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.transport import LocalTransport
from tests.conftest import SlurmCluster
from tests.slurm.conftest import impatient_slurm_conf, running_two_node_job
from workflows.options import NON_RETRYABLE_SLURM_ERRORS, PRESETS

pytestmark = [pytest.mark.slurm]


@pytest.fixture
def activities(local_client: SlurmClient) -> SlurmActivities:
    return SlurmActivities(local_client)


@pytest.fixture
def unreachable(slurm_cluster: SlurmCluster, tmp_path: Path) -> SlurmActivities:
    conf = impatient_slurm_conf(slurm_cluster, tmp_path, controller_port=36999)
    return SlurmActivities(SlurmClient(LocalTransport(conf)))


@pytest.mark.asyncio
async def test_unknown_job_is_non_retryable(activities: SlurmActivities) -> None:
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(activities.release_job, 987654321)
    assert err.value.type == "UnknownJob" and err.value.non_retryable
    assert "987654321" in err.value.message


@pytest.mark.asyncio
async def test_invalid_argument_is_non_retryable(activities: SlurmActivities) -> None:
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(activities.drain_nodes, NodeAction(nodes=["node1;reboot"], reason="x"))
    assert err.value.type == "InvalidArgument" and err.value.non_retryable


@pytest.mark.asyncio
async def test_unreachable_controller_stays_retryable(unreachable: SlurmActivities) -> None:
    for activity_fn, arg in ((unreachable.release_job, 1), (unreachable.list_nodes, None)):
        with pytest.raises(ApplicationError) as err:
            await (
                ActivityEnvironment().run(activity_fn) if arg is None else ActivityEnvironment().run(activity_fn, arg)
            )
        assert err.value.type == "ControllerUnreachable" and not err.value.non_retryable


@pytest.mark.asyncio
@pytest.mark.slow
async def test_restart_activity_heartbeats_while_it_waits(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, activities: SlurmActivities, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    bad = (await local_client.job(job_id)).nodes[0]
    env = ActivityEnvironment()
    beats: list[object] = []
    env.on_heartbeat = lambda *details: beats.append(details)
    result = await env.run(
        activities.restart_excluding,
        RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad], wait_running_s=60),
    )
    assert result.state is JobState.RUNNING and result.new_attempt == 1 and bad not in result.nodes
    assert beats, "the restart activity never heartbeated"


def test_every_permanent_error_is_listed_as_non_retryable_in_the_presets() -> None:
    permanent = {error_type(cls("x")) for cls in _all_errors() if not cls.retryable}
    assert permanent == set(NON_RETRYABLE_SLURM_ERRORS)
    for name, preset in PRESETS.items():
        if name == "NOTIFY":  # posts to webhooks, no Slurm command: its permanent error is a bad webhook
            assert preset["retry_policy"].non_retryable_error_types == ["BadWebhook"]
            continue
        assert set(preset["retry_policy"].non_retryable_error_types or []) == set(NON_RETRYABLE_SLURM_ERRORS)


def test_activity_names_are_stable() -> None:
    names = [fn.__temporal_activity_definition.name for fn in SlurmActivities.__new__(SlurmActivities).all()]
    assert names == [
        "slurm_list_nodes",
        "slurm_node_census",
        "slurm_restart_excluding",
        "slurm_cancel_attempt",
        "slurm_release_job",
        "slurm_release_lazarus_hold",
        "slurm_lift_expedite",
        "slurm_drain_nodes",
        "slurm_resume_nodes",
        "slurm_refill_reservation",
    ]


def _all_errors() -> list[type[errors.SlurmError]]:
    found: list[type[errors.SlurmError]] = []
    pending = [errors.SlurmError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return [cls for cls in found if cls is not errors.SlurmError]
