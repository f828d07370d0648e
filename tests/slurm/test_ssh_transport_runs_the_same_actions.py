"""The same verified actions over SSH to a real OpenSSH server, with host keys verified and the connection reused."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from lazarus.config import SshSettings
from lazarus.models.slurm import JobState, NodeAction, RestartRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import HostKeyError, InvalidArgumentError
from lazarus.slurm.ssh import SshTransport
from tests.conftest import SlurmCluster
from tests.slurm.conftest import RecordingTransport, running_two_node_job
from tests.slurm.sshd import Sshd

pytestmark = [pytest.mark.slurm, pytest.mark.ssh, pytest.mark.asyncio]


def ssh_settings(sshd: Sshd, known_hosts: Path) -> SshSettings:
    return SshSettings(host="127.0.0.1", port=sshd.port, user="root", key_file=sshd.client_key, known_hosts=known_hosts)


@pytest.mark.slow
async def test_restart_over_ssh_moves_the_job_and_counts_one_attempt(
    slurm_cluster: SlurmCluster, ssh_client: SlurmClient, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, ssh_client, jobs)
    bad = (await ssh_client.job(job_id)).nodes[1]
    request = RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad], wait_running_s=60)

    first = await ssh_client.restart_excluding(request)
    second = await ssh_client.restart_excluding(request)

    assert first.new_attempt == 1 and not first.already_done
    assert first.state is JobState.RUNNING and bad not in first.nodes and first.excluded_nodes == [bad]
    assert second.already_done and (await ssh_client.job(job_id)).restarts == 1


async def test_drain_and_resume_over_ssh(ssh_client: SlurmClient, restore_nodes: None) -> None:
    drained = await ssh_client.drain(NodeAction(nodes=["node4"], reason="lazarus ssh test; not a shell: $(id)"))
    assert drained.changed == ["node4"] and drained.nodes[0].drained
    assert drained.nodes[0].reason.startswith("lazarus ssh test; not a shell: $(id)")  # quoted, not run
    resumed = await ssh_client.resume(NodeAction(nodes=["node4"]))
    assert resumed.changed == ["node4"] and not resumed.nodes[0].drained


async def test_an_unknown_host_key_is_refused(sshd: Sshd, tmp_path: Path) -> None:
    other_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFmL3ZcG9YqQ5S6c1xq2gqWm7lYw2V0gS3uQn0wHkq2X"
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{sshd.port} {other_key}\n")
    client = SlurmClient(SshTransport(ssh_settings(sshd, known_hosts)))
    with pytest.raises(HostKeyError, match="not trusted") as err:
        await client.nodes()
    assert not err.value.retryable


async def test_a_missing_known_hosts_file_is_refused_with_the_fix(sshd: Sshd, tmp_path: Path) -> None:
    client = SlurmClient(SshTransport(ssh_settings(sshd, tmp_path / "absent")))
    with pytest.raises(HostKeyError, match="ssh-keyscan"):
        await client.nodes()


async def test_a_lost_connection_is_reopened_for_the_next_command(ssh_client: SlurmClient, sshd: Sshd) -> None:
    assert len(await ssh_client.nodes()) == 4
    for pid in sshd.connection_pids():  # the per-connection sshd processes: ours, started by our sshd
        os.kill(pid, signal.SIGKILL)
    assert len(await ssh_client.nodes()) == 4


async def test_one_connection_serves_many_commands(ssh_client: SlurmClient, sshd: Sshd) -> None:
    await ssh_client.nodes()
    before = set(sshd.connection_pids())
    for _ in range(3):
        await ssh_client.nodes()
    assert set(sshd.connection_pids()) <= before  # no new connection (an earlier test's may still be closing)


async def test_hostile_node_names_never_reach_the_remote_shell(sshd: Sshd, slurm_cluster: SlurmCluster) -> None:
    recorder = RecordingTransport(
        SshTransport(ssh_settings(sshd, sshd.known_hosts), slurm_conf=slurm_cluster.slurm_conf)
    )
    client = SlurmClient(recorder)
    with pytest.raises(InvalidArgumentError):
        await client.drain(NodeAction(nodes=["node1;touch /tmp/lazarus-pwned"], reason="x"))
    assert recorder.calls == [] and not Path("/tmp/lazarus-pwned").exists()
