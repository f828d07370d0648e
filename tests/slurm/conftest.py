"""Fixtures for the Slurm adapter specs: clients over both transports, a real sshd, job helpers."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from lazarus.config import SshSettings
from lazarus.models.slurm import JobState
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.ssh import SshTransport
from lazarus.slurm.transport import CommandResult, LocalTransport, Transport
from tests.conftest import SlurmCluster, assert_eventually, submit_job, xdist_worker_index
from tests.slurm.sshd import SSHD_PORT, Sshd, start_sshd

SAMPLES = Path(__file__).parent / "samples"

# Each rank prints where it runs and which attempt it is, then sleeps (the test cancels it).
TWO_NODE_SCRIPT = (
    "srun bash -c 'echo rank $SLURM_PROCID on $SLURMD_NODENAME attempt ${SLURM_RESTART_COUNT:-0}; sleep 600'\n"
)


class RecordingTransport(Transport):
    """Wraps a real transport and records every argv it was asked to run (to prove what ran, or that nothing did)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def description(self) -> str:
        return f"recording {self.inner.description}"

    async def run(self, argv: list[str], timeout: float) -> CommandResult:
        self.calls.append(list(argv))
        return await self.inner.run(argv, timeout)

    async def close(self) -> None:
        await self.inner.close()


WRITE_COMMANDS = {"requeuehold", "hold", "update", "release", "requeue"}


def writes(recorder: RecordingTransport) -> list[list[str]]:
    """The state-changing commands among those recorded (scontrol writes and scancel)."""
    return [c for c in recorder.calls if c[0] == "scancel" or (c[0] == "scontrol" and c[1] in WRITE_COMMANDS)]


@pytest.fixture
def recorder(slurm_cluster: SlurmCluster) -> RecordingTransport:
    return RecordingTransport(LocalTransport(slurm_cluster.slurm_conf))


@pytest.fixture
def local_client(recorder: RecordingTransport) -> SlurmClient:
    return SlurmClient(recorder, verify_timeout=30)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = start_sshd(tmp_path_factory.mktemp("sshd"), SSHD_PORT + xdist_worker_index())  # one per xdist worker
    try:
        yield server
    finally:
        server.stop()


@pytest_asyncio.fixture
async def ssh_client(sshd: Sshd, slurm_cluster: SlurmCluster) -> AsyncIterator[SlurmClient]:
    settings = SshSettings(
        host="127.0.0.1", port=sshd.port, user="root", key_file=sshd.client_key, known_hosts=sshd.known_hosts
    )
    client = SlurmClient(SshTransport(settings, slurm_conf=slurm_cluster.slurm_conf), verify_timeout=30)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def jobs(slurm_cluster: SlurmCluster) -> Iterator[list[int]]:
    """Job ids a test submitted; all cancelled afterwards so they do not hold nodes for other tests."""
    submitted: list[int] = []
    yield submitted
    if submitted:
        slurm_cluster.run("scancel", *map(str, submitted), check=False)


@pytest.fixture
def restore_nodes(slurm_cluster: SlurmCluster) -> Iterator[None]:
    """Resume every node after a test that drains nodes, even when it fails."""
    yield
    slurm_cluster.resume_all_nodes()


async def running_two_node_job(cluster: SlurmCluster, client: SlurmClient, jobs: list[int], **opts: object) -> int:
    """Submit a 2-node job and wait until it runs; returns its id."""
    job_id = submit_job(cluster, TWO_NODE_SCRIPT, nodes=2, **opts)
    jobs.append(job_id)

    async def running() -> bool:
        job = await client.job(job_id)
        return job.state is JobState.RUNNING and len(job.nodes) == 2

    await assert_eventually(running, timeout=60, interval=0.3)
    return job_id


def impatient_slurm_conf(cluster: SlurmCluster, directory: Path, controller_port: int | None = None) -> Path:
    """A copy of the cluster's slurm.conf with MessageTimeout=1 (and optionally another controller port).

    With the default MessageTimeout=10 a client keeps trying an absent
    controller for ~18 s; with 1 it gives up at once. Specs about an
    unreachable controller use it so the outage window stays short.
    """
    conf = re.sub(r"(?m)^MessageTimeout=.*$", "MessageTimeout=1", cluster.slurm_conf.read_text())
    if controller_port is not None:
        conf = re.sub(r"(?m)^SlurmctldPort=.*$", f"SlurmctldPort={controller_port}", conf)
    path = directory / "slurm.conf"
    path.write_text(conf)
    return path
