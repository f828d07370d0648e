"""`lazarus submit`, `watch` and `jobs` tell the truth: a policy is checked before anything changes, the
user's own comment is kept next to the opt-in, and what Lazarus then did (watching, ignoring and why, not
seen yet) is reported from the job's workflow, not assumed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.service import RPCError

from lazarus.cli.progress import ERASE
from lazarus.models.recovery import RecoveryState
from lazarus.slurm.client import SlurmClient
from tests.e2e.helpers import json_lines, lazarus_cli, wait_state
from tests.e2e.stack import (
    JOB_PREFIX,
    POLICY,
    REPO,
    TEST_POLICIES,
    E2EStack,
    submit_training,
    training_script,
)

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

KNOWN = "a job may choose: " + ", ".join(  # not HIDDEN_POLICY
    sorted(name for name, policy in TEST_POLICIES.items() if name == "default" or policy.get("selectable"))
)
RUNS_A_WHILE = dict(steps=40, step_time=0.25)


def script(e2e: E2EStack, job_dir: Path) -> str:
    path = job_dir / "train.sh"
    path.write_text(training_script(e2e.cluster, job_dir / "ckpt", **RUNS_A_WHILE))
    return str(path)


def sbatch_args(e2e: E2EStack, job_dir: Path, name: str) -> list[str]:
    return [
        "--",
        f"--job-name={name}",
        "-N2",
        "--ntasks-per-node=1",
        "--time=3",
        f"--output={job_dir}/%j.out",
        script(e2e, job_dir),
    ]


async def comment_of(e2e: E2EStack, job: int) -> str:
    async with SlurmClient.local(e2e.settings.scheduler, command_timeout=30) as slurm:
        return (await slurm.job(job)).comment


def on_a_terminal(e2e: E2EStack, *args: str) -> tuple[str, str]:
    """`lazarus ARGS` with stderr on a pseudo-terminal, as a user at a terminal runs it: (stdout, what the
    terminal received)."""
    main_fd, side_fd = os.openpty()
    env = dict(os.environ, LAZARUS_CONFIG=str(e2e.config_path), SLURM_CONF=str(e2e.cluster.slurm_conf))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lazarus.cli.main", *args],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=side_fd,
            text=True,
            timeout=90,
        )
        os.close(side_fd)
        received = b""
        with contextlib.suppress(OSError):  # EIO: every writer has closed the terminal
            while chunk := os.read(main_fd, 4096):
                received += chunk
    finally:
        os.close(main_fd)
    assert proc.returncode == 0, received
    return proc.stdout, received.decode()


def one_sentence(stderr: str) -> bool:
    return stderr.startswith("lazarus: ") and stderr.count("\n") == 1 and "Traceback" not in stderr


async def test_submit_refuses_an_unknown_policy_naming_the_known_ones_and_submits_nothing(e2e, job_dir):
    name = f"{JOB_PREFIX}nosuch"
    proc = lazarus_cli(e2e, "submit", "--policy", "nosuch", *sbatch_args(e2e, job_dir, name), check=False)
    assert proc.returncode == 2 and proc.stdout == "" and one_sentence(proc.stderr)
    assert "unknown policy 'nosuch'" in proc.stderr and KNOWN in proc.stderr and "nothing was submitted" in proc.stderr
    assert e2e.cluster.run("squeue", "-h", "-n", name).stdout.strip() == ""


async def test_submit_keeps_the_users_comment_and_reports_that_lazarus_watches_the_job(e2e, job_dir):
    args = sbatch_args(e2e, job_dir, f"{JOB_PREFIX}own")
    proc = lazarus_cli(e2e, "submit", "--policy", POLICY, "--", "--comment", "team=nlp", *args[1:])
    first, verdict, *_ = proc.stdout.splitlines()
    job = int(first.split()[3])
    try:
        assert first == f"Submitted batch job {job}"
        assert verdict.startswith(f"Lazarus watches job {job} (policy {POLICY}, mode act): http")
        assert json.loads(await comment_of(e2e, job)) == {"lazarus": {"policy": POLICY}, "comment": "team=nlp"}
        assert (await e2e.status(job)).state in (RecoveryState.WATCHING, RecoveryState.COMPLETED)
    finally:
        e2e.cluster.run("scancel", str(job))


async def test_submit_says_when_lazarus_has_not_seen_the_job_yet_and_how_to_check_later(e2e, job_dir):
    # this session's worker watches only jobs named with its prefix: this one it never sees
    proc = lazarus_cli(e2e, "submit", "--wait", "2", *sbatch_args(e2e, job_dir, "not-for-this-worker"))
    first, verdict = proc.stdout.splitlines()
    job = int(first.split()[3])
    e2e.cluster.run("scancel", str(job))
    assert verdict.startswith(f"Lazarus has not picked up job {job} within 2 s")
    assert verdict.endswith(f"check later with `lazarus show {job}`")
    assert "watched by Lazarus" not in proc.stdout
    assert proc.stderr == ""  # stderr is a pipe here: no progress line


async def test_submit_shows_its_wait_on_a_terminal_and_erases_it_before_the_verdict(e2e, job_dir):
    stdout, terminal = on_a_terminal(e2e, "submit", "--wait", "2", *sbatch_args(e2e, job_dir, "not-for-this-worker"))
    first, verdict = stdout.splitlines()
    job = int(first.split()[3])
    e2e.cluster.run("scancel", str(job))
    assert f"{ERASE}waiting for Lazarus to pick up job {job}... 1 s" in terminal
    assert terminal.endswith(ERASE)  # erased: the verdict on stdout starts on a clean line
    assert verdict.startswith(f"Lazarus has not picked up job {job} within 2 s")


async def test_watch_refuses_an_unknown_policy_and_changes_nothing(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment="team=nlp", **RUNS_A_WHILE)
    try:
        proc = lazarus_cli(e2e, "watch", str(job), "--policy", "bogus", check=False)
        assert proc.returncode == 2 and proc.stdout == "" and one_sentence(proc.stderr)
        assert "unknown policy 'bogus'" in proc.stderr and KNOWN in proc.stderr
        assert f"the comment of job {job} is unchanged" in proc.stderr
        assert await comment_of(e2e, job) == "team=nlp"
        await asyncio.sleep(2)  # several discovery cycles: still nothing for Lazarus to pick up
        with pytest.raises(RPCError):
            await e2e.status(job)

        out = lazarus_cli(e2e, "watch", str(job), "--policy", POLICY).stdout
        assert f"Lazarus watches job {job} (policy {POLICY}, mode act)" in out
        assert json.loads(await comment_of(e2e, job)) == {"lazarus": {"policy": POLICY}, "comment": "team=nlp"}
    finally:
        e2e.cluster.run("scancel", str(job))


async def test_watch_never_rewrites_the_comment_of_a_job_lazarus_already_watches(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, **RUNS_A_WHILE)
    try:
        await wait_state(e2e, job, RecoveryState.WATCHING, timeout=30)
        before = await comment_of(e2e, job)
        for policy in ("bogus", "default"):
            proc = lazarus_cli(e2e, "watch", str(job), "--policy", policy, check=False)
            assert proc.returncode == 2 and one_sentence(proc.stderr) and "now opted in" not in proc.stdout
            assert f"the comment of job {job} is unchanged" in proc.stderr
        assert "unknown policy 'bogus'" not in proc.stderr  # "default" is known: refused because the job is watched
        assert f"Lazarus watches job {job} (policy {POLICY}, mode act)" in proc.stderr
        assert await comment_of(e2e, job) == before and (await e2e.status(job)).policy_name == POLICY
        again = lazarus_cli(e2e, "watch", str(job), "--policy", POLICY).stdout
        assert again.splitlines()[0] == f"job {job}: already opted in"
    finally:
        e2e.cluster.run("scancel", str(job))


async def test_jobs_lists_an_ignored_job_with_the_policy_it_named_and_the_reason(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": "no-such-policy"}}, steps=2)
    await wait_state(e2e, job, RecoveryState.IGNORED, timeout=30)
    for _ in range(40):  # visibility is eventually consistent
        rows = [r for r in json_lines(lazarus_cli(e2e, "jobs", "--json").stdout) if r["job_id"] == job]
        if rows and rows[0]["state"] == "ignored":
            break
        await asyncio.sleep(0.25)
    [row] = rows
    assert row["policy"] == "no-such-policy" and row["mode"] is None
    assert row["reason"].startswith("unknown policy 'no-such-policy' in job comment; a job may choose")
    table = lazarus_cli(e2e, "jobs", "--state", "ignored").stdout.splitlines()
    [at] = [i for i, line in enumerate(table) if line.split()[0] == str(job)]
    assert table[at].split()[2:5] == ["ignored", "-", "no-such-policy"]
    assert table[at + 1].strip() == f"ignored: {row['reason']}"
