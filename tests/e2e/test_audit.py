"""Spec: `lazarus audit` lists, from Temporal, every decision and action across jobs and nodes, with who, when,
what, why and the evidence: after a real recovery in act mode, an approval by a named operator, and a manual
drain and resume, each is there; `--json` prints one object per line, oldest first; `--since` leaves out
what came before."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lazarus.identity import os_user
from lazarus.models.recovery import RecoveryState
from tests.e2e.agents import node_agents
from tests.e2e.helpers import lazarus_cli, restore_nodes, wait_state
from tests.e2e.stack import POLICY, E2EStack, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")


def audit(e2e: E2EStack, *args: str) -> list[dict]:
    out = lazarus_cli(e2e, "audit", "--json", *args).stdout
    return [json.loads(line) for line in out.splitlines()]


def _find(records: list[dict], **match: object) -> dict:
    found = [r for r in records if all(r.get(k) == v for k, v in match.items())]
    assert found, f"no record with {match} among {[(r['action'], r['job_id'], r['node']) for r in records]}"
    return found[0]


async def test_audit_lists_a_recovery_an_approval_and_a_manual_drain_with_who_when_what_why(
    e2e: E2EStack, job_dir: Path, tmp_path: Path
):
    restore_nodes(e2e.cluster)
    try:
        with node_agents(e2e, tmp_path) as fake_gpus:  # the node's own agent corroborates the crash's drain
            await _audited(e2e, job_dir, fake_gpus)
    finally:
        restore_nodes(e2e.cluster)


async def _audited(e2e: E2EStack, job_dir: Path, fake_gpus: Path) -> None:
    began = datetime.now(UTC)
    for sub in "ab":
        (job_dir / sub).mkdir()
    recovered = submit_training(e2e.cluster, job_dir / "a", **CRASH, fake_gpu_dir=fake_gpus)
    approved = submit_training(
        e2e.cluster, job_dir / "b", comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH
    )
    final = await wait_state(e2e, recovered, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=120)
    assert final.state == RecoveryState.COMPLETED
    await wait_state(e2e, approved, RecoveryState.AWAITING_APPROVAL)
    lazarus_cli(e2e, "advice", "approve", str(approved), "--operator", "carol", "--comment", "xid 79, go")
    await wait_state(e2e, approved, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=120)
    spare = next(n for n in e2e.cluster.nodes if n not in final.advice_history[0].drain_nodes)
    lazarus_cli(e2e, "nodes", "drain", spare, "--reason", "fan noise, checking")
    lazarus_cli(e2e, "nodes", "resume", spare, "--comment", "fan replaced")

    records = audit(e2e)
    times = [datetime.fromisoformat(r["at"]) for r in records]
    assert times == sorted(times)
    # the session's ledger also holds earlier tests' drains of these nodes: look at this test's own
    recent = [r for r in records if datetime.fromisoformat(r["at"]) >= began]

    # the recovery in act mode: detected (with the failing line), advised, acted on, requeued
    detected = _find(records, job_id=recovered, action="detected")
    assert detected["who"] == "lazarus (log)" and "xid_79" in detected["what"]
    assert any("Xid" in line for line in detected["evidence"])
    advised = _find(records, job_id=recovered, action="advised")
    assert advised["who"] == "lazarus" and "hardware" in advised["why"] and advised["evidence"]
    assert _find(records, job_id=recovered, action="acted")["who"] == "lazarus (act mode)"
    requeued = _find(records, job_id=recovered, action="requeued")
    assert "requeued as attempt 1" in requeued["what"] and requeued["workflow_id"] == f"lazarus-lztest-{recovered}"

    # the ledger drained the node the crash implicated, on that job's evidence
    (bad,) = final.advice_history[0].drain_nodes
    drained = _find(recent, node=bad, action="drain", who="lazarus")
    assert any(f"job {recovered} attempt 0" in line for line in drained["evidence"])

    # a person's decisions carry their name and their words
    approval = _find(records, job_id=approved, action="approved")
    assert (approval["who"], approval["why"]) == (f"{os_user()} (note: carol)", "xid 79, go")  # the caller, noted
    manual = _find(recent, node=spare, action="drain")
    assert manual["why"] == "fan noise, checking" and manual["who"] not in ("lazarus", "outside Lazarus")
    assert _find(recent, node=spare, action="resume")["why"] == "fan replaced"

    # --since leaves out what came before; the text form says why, under each record
    since = audit(e2e, "--since", began.isoformat())
    assert since and all(datetime.fromisoformat(r["at"]) >= began for r in since)
    later = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    assert audit(e2e, "--since", later) == []
    text = lazarus_cli(e2e, "audit", "--since", "1h").stdout
    assert f"job {recovered} attempt 0" in text and "why: fan noise, checking" in text
