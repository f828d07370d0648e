"""What Temporal and Slurm say about every soak job once the run has settled: the workflow's execution status and
its status query, accounting's attempts (``sacct -D``: one row per attempt), the controller's restart count while
it still holds the job, and the node ledger's view."""

from __future__ import annotations

import asyncio

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from benchmarks.soak.models import JobFacts, JobPlan, SacctAttempt
from lazarus.models import names
from lazarus.models.recovery import JobStatus
from lazarus.slurm.reads import SlurmReader

RETRIES = 5


async def _retry(fn, what: str):
    """``fn()`` with a few retries (a freshly restarted worker may need a moment); raise the last error. Temporal's
    "not found" is an answer, not a failure: it is raised at once."""
    last: Exception | None = None
    for attempt in range(RETRIES):
        try:
            async with asyncio.timeout(20):
                return await fn()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                raise
            last = exc
        except Exception as exc:
            last = exc
        await asyncio.sleep(1 + attempt)
    raise RuntimeError(f"{what}: {last}") from last


async def workflow_facts(client: Client, cluster: str, job_id: int) -> tuple[str | None, JobStatus | None]:
    """The job workflow's execution status and status query; (None, None) when Lazarus never started one."""
    handle = client.get_workflow_handle(names.workflow_id(cluster, job_id))
    try:
        desc = await _retry(handle.describe, f"describe the workflow of job {job_id}")
    except RPCError:
        return None, None
    status = await _retry(
        lambda: handle.query(names.JOB_STATUS, result_type=JobStatus), f"query the workflow of job {job_id}"
    )
    return desc.status.name if desc.status else None, status


async def slurm_facts(reader: SlurmReader, job_id: int) -> tuple[list[SacctAttempt], int | None]:
    """Accounting's attempts, oldest first, and the controller's restart count (None once it forgot the job)."""
    rows = await _retry(lambda: reader.attempts(job_id), f"sacct for job {job_id}")
    attempts = [
        SacctAttempt(index=r.attempt or 0, state=r.state.value, nodes=r.nodes, start=r.start_time, end=r.end_time)
        for r in rows
    ]
    try:
        restarts = (await reader.job(job_id)).restarts
    except Exception:
        restarts = None
    return attempts, restarts


async def collect(
    client: Client, reader: SlurmReader, cluster: str, plans: list[JobPlan], users: dict[int, str]
) -> list[JobFacts]:
    facts = []
    for plan in plans:
        wf_status, status = await workflow_facts(client, cluster, plan.job_id)
        attempts, restarts = await slurm_facts(reader, plan.job_id)
        facts.append(
            JobFacts(
                plan=plan,
                user=users.get(plan.job_id, ""),
                workflow_status=wf_status,
                status=status,
                slurm_attempts=attempts,
                slurm_restarts=restarts,
                final_state=attempts[-1].state if attempts else None,
            )
        )
    return facts
