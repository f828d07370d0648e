"""Spec: every curl command in docs/http-api.md works as written against Temporal's own HTTP API, with a
real worker and real Slurm jobs: the status query shows the pending advice and its generation, signals
approve and reject it, the update answers synchronously, the kill switch switches every running job and
is lifted again, and a search-attribute query lists the jobs awaiting approval."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from lazarus.models.ledger import LedgerView
from lazarus.models.names import ledger_id, workflow_id
from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceStatus, RecoveryState
from tests.conftest import assert_eventually
from tests.e2e.helpers import restarts, restore_nodes, wait_state
from tests.e2e.stack import POLICY, REPO, E2EStack, submit_training
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = [pytest.mark.slurm, pytest.mark.temporal]

DOC = REPO / "docs" / "http-api.md"
RUNNABLE = re.compile(r"<!-- run: (?P<name>[a-z-]+) -->\n```sh\n(?P<body>.*?)```", re.S)
CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")
MONITOR = {"lazarus": {"policy": POLICY, "mode": "monitor"}}


def documented() -> dict[str, str]:
    """The doc's runnable commands by name: each ```sh block preceded by ``<!-- run: NAME -->``."""
    return {m["name"]: m["body"] for m in RUNNABLE.finditer(DOC.read_text(encoding="utf-8"))}


def run_documented(e2e: E2EStack, name: str, **variables: object) -> list[dict]:
    """Run one documented command with bash and real curl, the doc's shell variables set (``JOB`` sets
    ``WORKFLOW_ID`` too, as the doc does); its JSON answers."""
    if "JOB" in variables:
        variables["WORKFLOW_ID"] = workflow_id("lztest", int(str(variables["JOB"])))
    env = {
        "PATH": os.environ["PATH"],
        "TEMPORAL_HTTP_API": f"http://127.0.0.1:{e2e.http_port}",
        "TEMPORAL_NAMESPACE": "default",
        "CLUSTER": "lztest",
        **{key: str(value) for key, value in variables.items()},
    }
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", documented()[name]], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, f"{name}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    decoder, answers, text = json.JSONDecoder(), [], proc.stdout.strip()
    while text:
        answer, end = decoder.raw_decode(text)
        answers.append(answer)
        text = text[end:].strip()
    return answers


def test_every_curl_command_in_the_doc_is_marked_to_run():
    text = DOC.read_text(encoding="utf-8")
    curl_blocks = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "curl " in b]
    assert len(curl_blocks) == len(documented())
    assert set(documented()) == {
        "status",
        "approve",
        "reject",
        "approve-update",
        "kill-switch",
        "lift-kill-switch",
        "list-awaiting",
    }


@pytest.mark.asyncio(loop_scope="session")
async def test_the_documented_http_commands_drive_real_jobs(e2e, job_dir: Path):
    for sub in "abcd":
        (job_dir / sub).mkdir()
    rejected = submit_training(e2e.cluster, job_dir / "a", comment=MONITOR, **CRASH)
    by_signal = submit_training(e2e.cluster, job_dir / "b", comment=MONITOR, **CRASH)
    by_update = submit_training(e2e.cluster, job_dir / "c", comment=MONITOR, **CRASH)
    healthy = submit_training(e2e.cluster, job_dir / "d", sbatch={"nodes": 1}, steps=2000, step_time=0.1)
    try:
        # the status query shows the pending advice and its generation
        status = await wait_state(e2e, rejected, RecoveryState.AWAITING_APPROVAL)
        wid = workflow_id("lztest", rejected)
        (answer,) = run_documented(e2e, "status", JOB=rejected)
        (queried,) = answer["queryResult"]
        assert queried["state"] == "awaiting-approval" and queried["advice"]["status"] == "pending"
        generation = queried["advice"]["generation"]
        assert generation == status.advice.generation

        # a search-attribute query lists it among the jobs awaiting approval
        (listing,) = run_documented(e2e, "list-awaiting")
        assert wid in [e["execution"]["workflowId"] for e in listing["executions"]]

        # the update answers at once why a stale generation is refused; the reject signal stops the recovery
        (update,) = run_documented(e2e, "approve-update", JOB=rejected, GENERATION=generation + 1)
        assert "stale advice generation" in update["outcome"]["failure"]["message"]
        run_documented(e2e, "reject", JOB=rejected, GENERATION=generation)
        final = await wait_state(e2e, rejected, RecoveryState.STOPPED, timeout=60)
        assert final.advice_history[0].status == AdviceStatus.REJECTED
        assert final.advice_history[0].decided_by == "alice"
        assert restarts(e2e.cluster, rejected) == 0

        # the approve signal and the approve update each restart a job
        for job, name in ((by_signal, "approve"), (by_update, "approve-update")):
            status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
            answers = run_documented(e2e, name, JOB=job, GENERATION=status.advice.generation)
            if name == "approve-update":
                assert answers[0]["outcome"]["success"], answers
            final = await wait_state(e2e, job, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=120)
            assert final.state == RecoveryState.COMPLETED and final.advice_history[0].decided_by == "alice"
            assert restarts(e2e.cluster, job) == 1

        # the kill switch puts the running job and the ledger in monitor mode; lifting it returns to act
        await wait_state(e2e, healthy, RecoveryState.WATCHING)
        for name, mode in (("kill-switch", Mode.MONITOR), ("lift-kill-switch", Mode.ACT)):
            run_documented(e2e, name)
            await assert_eventually(lambda m=mode: _job_mode(e2e, healthy, m), timeout=30)
            assert (await _ledger(e2e)).mode_override == mode.value
    finally:
        e2e.cluster.run("scancel", str(healthy), check=False)
        restore_nodes(e2e.cluster)


async def _job_mode(e2e: E2EStack, job: int, mode: Mode) -> bool:
    return (await e2e.status(job)).mode == mode


async def _ledger(e2e: E2EStack) -> LedgerView:
    handle = (await e2e.client()).get_workflow_handle(ledger_id("lztest"))
    return await handle.query(NodeLedgerWorkflow.view)
