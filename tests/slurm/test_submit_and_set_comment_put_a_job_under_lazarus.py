"""Submitting with the opt-in comment, and setting the comment of a queued job, go through SlurmClient and are verified.

Jobs here are submitted held (``--hold``): they never take nodes from other
specs, and the ``jobs`` fixture cancels them afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lazarus.models.slurm import SubmitRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import SlurmError
from tests.conftest import SlurmCluster, submit_job
from tests.slurm.conftest import RecordingTransport, writes

pytestmark = [pytest.mark.slurm, pytest.mark.asyncio]

OPT_IN = json.dumps({"lazarus": {"policy": "default"}})


def held_job_args(cluster: SlurmCluster) -> list[str]:
    """sbatch options for a held, short job plus its script."""
    script = cluster.job_dir / "held.sh"
    script.write_text("#!/bin/bash\nsleep 60\n")
    return ["--hold", "--time=1", f"--output={cluster.job_dir / '%j.out'}", str(script)]


async def test_a_submitted_job_carries_the_opt_in_comment(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, jobs: list[int]
) -> None:
    result = await local_client.submit(SubmitRequest(args=held_job_args(slurm_cluster), comment=OPT_IN))
    jobs.append(result.job_id)

    assert result.comment == OPT_IN
    # The telemetry loop discovers opt-ins from squeue --json: the comment must be there too.
    listed = [job for job in await local_client.jobs() if job.job_id == result.job_id]
    assert [job.comment for job in listed] == [OPT_IN]


async def test_a_comment_given_in_the_arguments_is_kept_when_none_is_added(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, jobs: list[int]
) -> None:
    result = await local_client.submit(SubmitRequest(args=["--comment=nightly eval", *held_job_args(slurm_cluster)]))
    jobs.append(result.job_id)
    assert result.comment == "nightly eval"


async def test_a_submission_slurm_refuses_is_a_typed_error(
    slurm_cluster: SlurmCluster, local_client: SlurmClient
) -> None:
    with pytest.raises(SlurmError, match="sbatch"):
        await local_client.submit(
            SubmitRequest(args=["--partition=no-such-partition", *held_job_args(slurm_cluster)], comment=OPT_IN)
        )


async def test_set_comment_opts_in_a_queued_job_once_and_verifies_it(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = submit_job(slurm_cluster, "sleep 60", hold=True, time=1)
    jobs.append(job_id)

    first = await local_client.set_comment(job_id, OPT_IN)
    second = await local_client.set_comment(job_id, OPT_IN)

    assert first.changed and first.comment == OPT_IN
    assert not second.changed and (await local_client.job(job_id)).comment == OPT_IN
    assert writes(recorder) == [["scontrol", "update", f"JobId={job_id}", f"Comment={OPT_IN}"]]


async def test_shell_metacharacters_in_a_comment_are_stored_as_data_and_never_run(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, jobs: list[int], tmp_path: Path
) -> None:
    await comment_is_data(slurm_cluster, local_client, jobs, tmp_path / "pwned")


@pytest.mark.ssh
async def test_over_ssh_too_a_comment_is_quoted_and_never_run_by_the_remote_shell(
    slurm_cluster: SlurmCluster, ssh_client: SlurmClient, jobs: list[int], tmp_path: Path
) -> None:
    await comment_is_data(slurm_cluster, ssh_client, jobs, tmp_path / "pwned")


async def comment_is_data(cluster: SlurmCluster, client: SlurmClient, jobs: list[int], marker: Path) -> None:
    """set_comment and submit store a comment full of shell syntax exactly, and no shell runs any of it."""
    comment = json.dumps(
        {
            "lazarus": {"policy": "default"},
            "note": f"$(touch {marker}); `touch {marker}` | touch {marker} && 'q\" Restarts=9",
        }
    )
    job_id = submit_job(cluster, "sleep 60", hold=True, time=1)
    jobs.append(job_id)

    result = await client.set_comment(job_id, comment)
    submitted = await client.submit(SubmitRequest(args=held_job_args(cluster), comment=comment))
    jobs.append(submitted.job_id)

    assert result.comment == comment and submitted.comment == comment
    assert (await client.job(job_id)).comment == comment
    assert not marker.exists()
