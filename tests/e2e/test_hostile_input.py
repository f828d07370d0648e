"""Hostile input on the real stack (issue 8, item 14): a job's user writes its comment and everything it prints,
and anyone can type anything at the CLI or send anything to a workflow. With the real Slurm cluster, a real
Temporal server and the worker processes:

- a comment with an injection attempt, huge or deeply nested JSON, or unknown keys gets the job ignored with
  one clear, printable reason, and nothing else happens (no activity, no restart, no command run);
- log lines with terminal escapes, invalid UTF-8, NUL bytes and 100 MB without a newline are read within
  bounded memory, telemetry keeps serving another job meanwhile, and `lazarus show` prints escapes as text;
- node names and job ids with shell metacharacters are refused with a typed error on every command path (each
  CLI command, the ledger's updates and signals, the scheduler activities), and no Slurm command runs;
- an approval naming another cluster's workflow, another job, or a stale generation is refused and recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.client import WorkflowUpdateFailedError

from lazarus.identity import os_user
from lazarus.models.ledger import DrainRequest, Implication, ResumeRequest
from lazarus.models.names import ledger_id, workflow_id
from lazarus.models.policy import Mode, Policy
from lazarus.models.recovery import (
    AnomalyDetected,
    Approval,
    AttemptEnded,
    AttemptStarted,
    JobEventEnvelope,
    JobRecoveryInput,
    RecoveryState,
    Rejection,
)
from lazarus.models.slurm import JobState
from tests.conftest import assert_eventually, submit_job
from tests.e2e.helpers import job_field, restarts, wait_state
from tests.e2e.stack import JOB_PREFIX, KEEP_RUNNING_POLICY, POLICY, REPO, E2EStack
from tests.workflows.harness import xid79_on
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

SLURM_COMMANDS = ("sbatch", "scontrol", "squeue", "sacct", "sinfo", "scancel", "srun")
XID_LINE = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


def shown_safely(text: str) -> bool:
    """Nothing in ``text`` can drive a terminal: every character is printable, or a newline."""
    return all(line.isprintable() for line in text.split("\n"))


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """A file that exists only if an injected command ran."""
    return tmp_path / "pwned"


@pytest.fixture
def slurm_log(tmp_path: Path) -> Path:
    """Every Slurm command the CLI runs is written here (a PATH shim in front of the real commands)."""
    shim, log = tmp_path / "shim", tmp_path / "slurm-commands.log"
    shim.mkdir()
    for name in SLURM_COMMANDS:
        real = shutil.which(name)
        (shim / name).write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\nexec {real} "$@"\n')
        (shim / name).chmod(0o755)
    log.touch()
    return log


def cli(e2e: E2EStack, slurm_log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`lazarus ARGS` in a shell, with the Slurm commands behind the recording shim."""
    env = dict(
        os.environ,
        LAZARUS_CONFIG=str(e2e.config_path),
        SLURM_CONF=str(e2e.cluster.slurm_conf),
        PATH=f"{slurm_log.parent / 'shim'}:{os.environ['PATH']}",
    )
    return subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=90
    )


async def activities_scheduled(e2e: E2EStack, wid: str) -> list[str]:
    history = await (await e2e.client()).get_workflow_handle(wid).fetch_history()
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


# ---- job comments --------------------------------------------------------------------------------------

COMMENTS = {
    "shell injection in the policy name": lambda m: json.dumps({"lazarus": {"policy": f"$(touch {m}); `touch {m}`"}}),
    "terminal escapes in the policy name": lambda m: json.dumps({"lazarus": {"policy": "\x1b]0;owned\x07\x1b[2J"}}),
    "unknown keys": lambda m: json.dumps({"lazarus": {"policy": POLICY, "exec": f"touch {m}", "drain": ["node1"]}}),
    "deeply nested JSON": lambda m: '{"lazarus": ' + "[" * 490 + "]" * 490 + "}",
    # Slurm itself refuses a comment over 1024 bytes (tests/properties/test_job_comments.py goes beyond)
    "huge JSON": lambda m: json.dumps({"lazarus": {"policy": POLICY, **{f"k{i}": i for i in range(85)}}}),
}


@pytest.mark.parametrize("kind", COMMENTS)
async def test_a_hostile_comment_gets_the_job_ignored_with_one_clear_reason_and_nothing_else(
    e2e, job_dir, marker, slurm_log, kind
):
    script = f"echo '{XID_LINE}'\nsleep 2\nexit 1\n"  # recovered (restarted, drained) if it were not ignored
    job = submit_job(
        e2e.cluster,
        script,
        job_name=f"{JOB_PREFIX}comment",
        nodes=1,
        comment=COMMENTS[kind](marker),
        output=str(job_dir / "comment-%j.out"),
    )
    status = await wait_state(e2e, job, RecoveryState.IGNORED, timeout=30)
    assert status.stop_reason and status.stop_reason.isprintable() and len(status.stop_reason) <= 1000
    await assert_eventually(lambda: job_field(e2e.cluster, job, "JobState") == "FAILED", timeout=30)
    assert restarts(e2e.cluster, job) == 0
    assert await activities_scheduled(e2e, workflow_id("lztest", job)) == []
    shown, listed = cli(e2e, slurm_log, "show", str(job)), cli(e2e, slurm_log, "jobs", "--state", "ignored")
    assert shown.returncode == 0 and listed.returncode == 0, shown.stderr + listed.stderr
    assert status.stop_reason in shown.stdout and str(job) in listed.stdout
    assert shown_safely(shown.stdout) and shown_safely(listed.stdout)
    assert not marker.exists()


# ---- log lines -----------------------------------------------------------------------------------------

HOSTILE_LINES = r"""printf 'step 1 \033[2J\033]0;owned\007 \377\376 NUL:\000: bad UTF-8 and a NUL\n'
printf '\033[31mtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\033]0;owned\007\000\377\n'
for i in $(seq 100); do head -c 1000000 /dev/zero | tr '\0' x; sleep 0.05; done
printf '\nstep 2\n'
exit 1
"""
# The neighbour's failure line comes while the flood is written; it has 20 s to be read before the job ends.
NEIGHBOUR = "sleep 4\necho 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB'\nsleep 20\nexit 1\n"


def peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


async def test_escapes_bad_bytes_and_100_mb_without_a_newline_are_read_in_bounded_memory_and_shown_as_text(
    e2e, job_dir, slurm_log
):
    worker = e2e.worker.pid
    # a warm worker (its imports done: a worker started for this test alone is still loading)
    await assert_eventually(lambda: peak_rss_kib(worker) > 60 * 1024, timeout=60)
    await asyncio.sleep(2)
    before = peak_rss_kib(worker)
    opt_in = json.dumps({"lazarus": {"policy": POLICY}})
    # the flood's stop keeps it running (on_stop: keep_running), so it writes all 100 MB for telemetry to read
    flood = submit_job(
        e2e.cluster,
        HOSTILE_LINES,
        job_name=f"{JOB_PREFIX}flood",
        nodes=1,
        comment=json.dumps({"lazarus": {"policy": KEEP_RUNNING_POLICY}}),
        output=str(job_dir / "flood-%j.out"),
    )
    neighbour = submit_job(
        e2e.cluster,
        NEIGHBOUR,
        job_name=f"{JOB_PREFIX}neighbour",
        nodes=1,
        comment=opt_in,
        output=str(job_dir / "neighbour-%j.out"),
    )
    status = await wait_state(e2e, flood, RecoveryState.STOPPED, timeout=60)
    anomaly = status.attempts[0].anomaly
    assert anomaly.diagnosis.signature == "cuda_oom" and "\x1b" in anomaly.diagnosis.evidence[0].text
    near = await wait_state(e2e, neighbour, RecoveryState.STOPPED, timeout=60)
    seen = near.attempts[0].anomaly
    assert seen.source == "log" and seen.diagnosis.signature == "cuda_oom", "the flood kept the neighbour unread"
    assert (seen.observed_at - near.attempts[0].started_at).total_seconds() < 15
    await assert_eventually(lambda: job_field(e2e.cluster, flood, "JobState") == "FAILED", timeout=60)
    assert (job_dir / f"flood-{flood}.out").stat().st_size > 100_000_000
    await asyncio.sleep(10)  # telemetry reads the rest of the flood, a few MiB per cycle
    assert e2e.worker.pid == worker and peak_rss_kib(worker) - before < 64 * 1024, "the worker's memory grew"
    assert restarts(e2e.cluster, flood) == 0 and restarts(e2e.cluster, neighbour) == 0
    shown = cli(e2e, slurm_log, "show", str(flood))
    assert shown.returncode == 0, shown.stderr
    assert "CUDA out of memory" in shown.stdout and "\\x1b" in shown.stdout
    assert shown_safely(shown.stdout), repr(shown.stdout)


# ---- shell metacharacters on every command path -------------------------------------------------------

CLI_PATHS = [
    ("nodes", "drain", "node1;touch {m}", "--reason", "fan"),
    ("nodes", "drain", "node1", "--reason", "fan\nState=RESUME $(touch {m})"),
    ("nodes", "resume", "$(touch {m})"),
    ("nodes", "resume", "node[1-2]`touch {m}`"),
    ("watch", "1;touch {m}"),
    ("show", "1 && touch {m}"),
    ("advice", "approve", "`touch {m}`"),
    ("advice", "reject", "1|touch {m}"),
    ("advice", "approve", "1", "--generation", "1;touch {m}"),
    ("mode", "act", "--job", "$(touch {m})"),
    ("submit", "--policy", "$(touch {m})", "--", "job.sh"),
]


@pytest.mark.parametrize("argv", CLI_PATHS, ids=lambda argv: " ".join(word for word in argv[:2] if word.isalpha()))
async def test_shell_metacharacters_are_refused_by_every_cli_command_and_no_slurm_command_runs(
    e2e, marker, slurm_log, argv
):
    done = cli(e2e, slurm_log, *(arg.format(m=marker) for arg in argv))
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(("lazarus: ", "lazarus ", "usage: ")), done.stderr
    assert slurm_log.read_text() == "" and not marker.exists()


async def test_the_ledger_refuses_hostile_node_names_in_updates_and_drops_them_from_forged_signals(e2e, marker):
    ledger = (await e2e.client()).get_workflow_handle(ledger_id("lztest"))
    before = await activities_scheduled(e2e, ledger.id)
    hostile = f"node1;touch {marker}"
    for update, request in (
        (NodeLedgerWorkflow.drain_node, DrainRequest(node=hostile, operator="eve", reason="x")),
        (NodeLedgerWorkflow.resume_node, ResumeRequest(node=hostile, operator="eve")),
    ):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await ledger.execute_update(update, request)
        assert "invalid node name" in str(refused.value.cause)
    now = datetime.now(UTC)
    await ledger.signal(
        NodeLedgerWorkflow.record_implication,
        Implication(
            node=hostile,
            job_id=1,
            attempt=0,
            signature="nvrm_xid_79",
            category="hardware",
            at=now,
            drain_requested=True,
        ),
    )

    async def dropped():
        view = await ledger.query(NodeLedgerWorkflow.view)
        history = await activities_scheduled(e2e, ledger.id)
        return hostile not in {r.node for r in view.nodes} and len(history) > len(before)

    await assert_eventually(dropped, timeout=30)  # Slurm's node list was read; the name is not a node of it
    assert "slurm_drain_nodes" not in (await activities_scheduled(e2e, ledger.id))[len(before) :]
    assert not marker.exists()


async def test_a_forged_allocation_with_hostile_node_names_reaches_the_scheduler_activity_and_is_refused_there(
    e2e, marker
):
    hostile = f"node1;touch {marker}"
    job_id = 4_000_000_000 + uuid.uuid4().int % 200_000_000  # a job Slurm does not have
    settings = e2e.settings
    inp = JobRecoveryInput(
        cluster="lztest",
        job_id=job_id,
        user="eve",
        cluster_mode=Mode.ACT,
        policy=Policy(),
        scheduler_queue=settings.task_queues.scheduler,
        telemetry_queue=settings.task_queues.telemetry,
        ledger_workflow_id=ledger_id("lztest"),
    )
    client = await e2e.client()
    handle = await client.start_workflow(
        JobRecoveryWorkflow.run, inp, id=workflow_id("lztest", job_id), task_queue=settings.task_queues.control
    )
    now = datetime.now(UTC)
    anomaly = xid79_on(hostile).anomaly.model_copy(update={"observed_at": now})
    for event in (
        AttemptStarted(attempt=0, nodes=[hostile], at=now),
        AnomalyDetected(anomaly=anomaly),
        AttemptEnded(attempt=0, state=JobState.FAILED, exit_code=1, at=now),
    ):
        await handle.signal(JobRecoveryWorkflow.job_event, JobEventEnvelope(event=event))
    status = await wait_state(e2e, job_id, RecoveryState.FAILED, timeout=60)
    assert "InvalidArgument" in status.stop_reason and "not a valid Slurm" in status.stop_reason, status.stop_reason
    assert "slurm_restart_excluding" in await activities_scheduled(e2e, handle.id)
    assert not marker.exists()


# ---- approvals -----------------------------------------------------------------------------------------


async def test_approvals_for_another_cluster_another_job_or_a_stale_generation_are_refused_and_recorded(
    e2e, job_dir, slurm_log
):
    comment = json.dumps({"lazarus": {"policy": POLICY, "mode": "monitor"}})
    job = submit_job(
        e2e.cluster,
        "sleep 2\nexit 1\n",
        job_name=f"{JOB_PREFIX}approve",
        nodes=1,
        comment=comment,
        output=str(job_dir / "approve-%j.out"),
    )
    status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL, timeout=60)
    generation = status.advice.generation
    other_cluster = cli(e2e, slurm_log, "advice", "approve", f"lazarus-othercluster-{job}")
    assert other_cluster.returncode == 2 and "cluster 'othercluster'" in other_cluster.stderr, other_cluster.stderr
    handle = (await e2e.client()).get_workflow_handle(workflow_id("lztest", job))
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(
            JobRecoveryWorkflow.approve_advice,
            Approval(generation=generation, operator="eve", job_id=job + 1, cluster="lztest"),
        )
    assert f"job {job + 1}" in str(refused.value.cause)
    await handle.signal(
        JobRecoveryWorkflow.approve_advice_signal,
        Approval(generation=generation, operator="eve", job_id=job, cluster="othercluster"),
    )
    await handle.signal(
        JobRecoveryWorkflow.approve_advice_signal, Approval(generation=generation + 5, operator="mallory")
    )

    async def recorded():
        current = await e2e.status(job)
        return current if len(current.refused_answers) == 2 else None

    current = await assert_eventually(recorded, timeout=20)
    assert current.state == RecoveryState.AWAITING_APPROVAL and restarts(e2e.cluster, job) == 0
    eve, mallory = current.refused_answers
    assert eve.operator == f"{os_user()} (note: eve)" and "othercluster" in eve.reason
    assert mallory.operator == f"{os_user()} (note: mallory)" and "stale advice generation" in mallory.reason
    shown = cli(e2e, slurm_log, "show", str(job)).stdout
    assert mallory.describe() in shown and "1 earlier" in shown, shown
    await handle.execute_update(
        JobRecoveryWorkflow.reject_advice,
        Rejection(generation=generation, operator="ops", job_id=job, cluster="lztest"),
    )
    final = await wait_state(e2e, job, RecoveryState.STOPPED, timeout=30)
    assert final.advice_history[0].decided_by == f"{os_user()} (note: ops)" and restarts(e2e.cluster, job) == 0
