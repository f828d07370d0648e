"""A multi-node job on the test cluster gets fake GPUs, like a real GPU job."""

from __future__ import annotations

import pytest

from tests.conftest import SlurmCluster, assert_eventually, job_output, submit_job

pytestmark = [pytest.mark.slurm, pytest.mark.asyncio(loop_scope="session")]


async def test_two_node_gres_job_sees_cuda_visible_devices_on_each_node(slurm_cluster: SlurmCluster) -> None:
    job = submit_job(
        slurm_cluster,
        "srun bash -c 'echo \"rank=$SLURM_PROCID node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES\"'\n",
        nodes=2,
        ntasks_per_node=1,
        gres="gpu:2",
    )

    def finished() -> bool:
        state = slurm_cluster.run("sacct", "-j", f"{job}", "-X", "-P", "-n", "-o", "State").stdout.strip()
        return state == "COMPLETED"

    await assert_eventually(finished, timeout=30)
    lines = sorted(job_output(slurm_cluster, job).read_text().splitlines())
    assert len(lines) == 2
    assert len({line.split()[1] for line in lines}) == 2, "the two ranks ran on two different nodes"
    assert all(line.endswith("gpus=0,1") for line in lines)
