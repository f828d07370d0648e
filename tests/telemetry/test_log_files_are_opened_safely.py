"""A job's user controls its output file: telemetry opens it without trusting them (issue 8, item 5).

Real Slurm jobs replace their own output file, while they run, with a symbolic
link to a secret file, a FIFO, or a file of another user; telemetry reads the
path Slurm reports (``scontrol show job``) as the telemetry loop does, with
the job's user id from Slurm, and must refuse each with one sentence, never
return the secret, never block.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from lazarus.detection.safe_open import LogAccess
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.transport import LocalTransport
from lazarus.telemetry.logreads import BoundedReads, LogReadStalledError
from lazarus.telemetry.offsets import OffsetStore
from tests.conftest import SlurmCluster, assert_eventually, submit_job

SECRET = "root:$6$secret-hash:19000:0:99999:7:::\nMay 1 12:00:03 node4 kernel: NVRM: Xid (PCI:0000:3b:00): 79\n"


@pytest.fixture
def secret(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root-owned file outside the job directory, standing in for /etc/shadow."""
    path = tmp_path_factory.mktemp("secret") / "shadow"
    path.write_text(SECRET)
    path.chmod(0o600)
    return path


async def _job_replacing_its_output(cluster: SlurmCluster, replace: str) -> tuple[str, LogAccess]:
    """Start a job whose script prints a line, then runs ``replace`` (a shell command; ``{out}`` is its own
    output file); returns the output path Slurm reports and the access rule telemetry would apply to it."""
    out = cluster.job_dir / f"hostile-{time.monotonic_ns()}.out"
    job = submit_job(cluster, f"echo started\n{replace.format(out=out)}\ntouch {out}.done\nsleep 60\n", output=str(out))
    slurm = SlurmClient(LocalTransport(cluster.slurm_conf))
    try:
        await assert_eventually(lambda: Path(f"{out}.done").exists(), timeout=30)
        full = await slurm.job(job)
    finally:
        cluster.run("scancel", str(job), check=False)
        await slurm.close()
    assert full.stdout_path == str(out) and full.user_id == os.getuid()
    return full.stdout_path, LogAccess(roots=(cluster.job_dir,), owner_uid=full.user_id)


@pytest.mark.slurm
@pytest.mark.asyncio(loop_scope="session")
async def test_an_output_file_replaced_by_a_symlink_to_a_secret_is_refused_not_read(slurm_cluster, secret):
    path, access = await _job_replacing_its_output(slurm_cluster, f"rm -f {{out}}; ln -s {secret} {{out}}")
    read = OffsetStore(None).read(path, 1 << 20, access)
    assert read.lines == [] and "is a symbolic link" in read.refused
    assert "secret-hash" not in repr(read)


@pytest.mark.slurm
@pytest.mark.asyncio(loop_scope="session")
async def test_an_output_file_replaced_by_a_fifo_is_refused_at_once_without_blocking(slurm_cluster):
    path, access = await _job_replacing_its_output(slurm_cluster, "rm -f {out}; mkfifo {out}")
    started = time.monotonic()
    read = OffsetStore(None).read(path, 1 << 20, access)
    assert "is a FIFO" in read.refused and time.monotonic() - started < 1


@pytest.mark.slurm
@pytest.mark.asyncio(loop_scope="session")
async def test_an_output_file_given_to_another_user_is_refused(slurm_cluster):
    path, access = await _job_replacing_its_output(slurm_cluster, "chown 65534 {out}")
    read = OffsetStore(None).read(path, 1 << 20, access)
    assert read.refused == f"{path} belongs to uid 65534, not to the job's user (uid {os.getuid()})"


def test_a_path_outside_the_allowed_roots_is_refused_even_through_dot_dot(tmp_path, secret):
    allowed = tmp_path / "jobs"
    allowed.mkdir()
    escape = f"{allowed}/../../{secret.parent.name}/{secret.name}"
    read = OffsetStore(None).read(escape, 1 << 20, LogAccess(roots=(allowed,)))
    assert "outside the allowed log directories" in read.refused and read.lines == []


def test_a_directory_on_the_way_that_is_a_symlink_is_resolved_before_the_roots_are_checked(tmp_path, secret):
    allowed = tmp_path / "jobs"
    allowed.mkdir()
    (allowed / "link").symlink_to(secret.parent)
    read = OffsetStore(None).read(str(allowed / "link" / secret.name), 1 << 20, LogAccess(roots=(allowed,)))
    assert "outside the allowed log directories" in read.refused


def test_a_regular_file_of_the_jobs_user_inside_the_roots_is_read(tmp_path):
    log = tmp_path / "train.out"
    log.write_text("step 1\n")
    read = OffsetStore(None).read(str(log), 1 << 20, LogAccess(roots=(tmp_path,), owner_uid=os.getuid()))
    assert read.refused is None and [t.text for t in read.lines] == ["step 1"]


@pytest.mark.asyncio(loop_scope="session")
async def test_a_read_that_blocks_costs_one_timeout_and_never_holds_up_other_files():
    release = threading.Event()
    reads = BoundedReads(timeout=0.3, threads=2)
    try:
        with pytest.raises(LogReadStalledError, match=r"did not return within 0\.3 s"):
            await reads.run("/nfs/stuck.out", release.wait)
        started = time.monotonic()
        with pytest.raises(LogReadStalledError, match="still not returned"):
            await reads.run("/nfs/stuck.out", release.wait)
        assert time.monotonic() - started < 0.1  # the stuck file is skipped, not waited for again
        results = await asyncio.gather(*(reads.run(f"/home/job{i}.out", lambda i=i: i) for i in range(10)))
        assert results == list(range(10)) and time.monotonic() - started < 1
        assert reads.stuck() == ["/nfs/stuck.out"]
        release.set()
        await assert_eventually(lambda: reads.stuck() == [], timeout=2)
        assert await reads.run("/nfs/stuck.out", lambda: "read again") == "read again"
    finally:
        release.set()
        reads.close()
