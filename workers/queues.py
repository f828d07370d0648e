"""Before a worker serves: the cluster's long-lived workflows run on the task queues it is configured for.

The node ledger (control queue) and the telemetry lease (telemetry queue) live as long as the deployment.
If the configured task queues changed under them (the per-cluster default names of 0.x, say, on a
deployment that ran the old shared names), no worker would ever serve them again: the lease would
never be granted, so no job would be watched, and nothing would say why. So the worker refuses to
start, in one sentence that names the workflow, both queues and the way out; it starts when a
workflow is absent, ended, or cannot be described (Temporal's reachability is reported elsewhere).
"""

from __future__ import annotations

from loguru import logger
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from lazarus.config import Settings
from lazarus.errors import LazarusError
from lazarus.models import names


class TaskQueueMismatchError(LazarusError):
    """A long-lived workflow of this cluster runs on a task queue this configuration does not serve."""


def expected_queues(settings: Settings) -> dict[str, str]:
    """The cluster's long-lived workflows, by id, and the task queue each must run on."""
    return {
        names.ledger_id(settings.cluster): settings.task_queues.control,
        names.telemetry_lease_id(settings.cluster): settings.task_queues.telemetry,
    }


async def check_task_queues(client: Client, settings: Settings) -> None:
    """Raise :class:`TaskQueueMismatchError` when a running ledger or lease workflow of this cluster runs on
    another task queue than the configured one."""
    for wid, queue in expected_queues(settings).items():
        try:
            described = await client.get_workflow_handle(wid).describe()
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                logger.warning(f"cannot check the task queue of {wid}: {exc.message}")
            continue
        if described.status == WorkflowExecutionStatus.RUNNING and described.task_queue != queue:
            raise TaskQueueMismatchError(
                f"{wid} runs on task queue '{described.task_queue}' but this worker is configured for "
                f"'{queue}', so nothing would serve it: set task_queues to the names the running workflows "
                "use (see CHANGELOG, per-cluster task queues) or terminate them first"
            )
