"""Only the operators of ``authorization.operators`` may approve, reject, switch modes, drain or resume, on
the real stack: the identity is the OS user the `lazarus` CLI runs as (sent in the ``lazarus-caller`` header),
not the ``--operator`` text. The worker restarts with the list each test names; this user's CLI is the
colleague with namespace access who is not an operator when the list names only ``alice``.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from lazarus.models.names import workflow_id
from lazarus.models.recovery import JobStatus, RecoveryState
from tests.e2e.helpers import lazarus_cli, restarts, restore_nodes, wait_state
from tests.e2e.stack import POLICY, E2EStack, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")
ME = pwd.getpwuid(os.geteuid()).pw_name


@contextmanager
def operators(e2e: E2EStack, *names: str) -> Iterator[E2EStack]:
    """The worker restarted with ``authorization.operators: names``; restored to none afterwards."""
    e2e.operators = list(names)
    e2e.write_config()
    e2e.kill_worker()
    e2e.start_worker()
    try:
        yield e2e
    finally:
        e2e.operators = []
        e2e.write_config()
        e2e.kill_worker()
        e2e.start_worker()


def signal_over_http(e2e: E2EStack, job: int, name: str, body: dict, caller: dict | None = None) -> None:
    """A signal through Temporal's HTTP API, as curl would send it; ``caller`` sets the lazarus-caller header."""
    request: dict = {"input": [body]}  # Temporal's JSON shorthand for payloads
    if caller is not None:
        request["header"] = {"fields": {"lazarus-caller": caller}}
    url = f"http://127.0.0.1:{e2e.http_port}/api/v1/namespaces/default/workflows/{workflow_id('lztest', job)}/signal/{name}"
    req = urllib.request.Request(url, data=json.dumps(request).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as reply:
        assert reply.status == 200


async def refusals(e2e: E2EStack, job: int, count: int) -> JobStatus:
    for _ in range(100):
        status = await e2e.status(job)
        if len(status.refused_answers) >= count:
            return status
        await asyncio.sleep(0.2)
    raise AssertionError(f"job {job} recorded {len(status.refused_answers)} refusals, not {count}")


async def test_a_non_operator_is_refused_and_recorded_and_a_permitted_user_approves(e2e: E2EStack, job_dir):
    with operators(e2e, "alice"):
        job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH)
        status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)

        refused = lazarus_cli(e2e, "advice", "approve", str(job), "--operator", "alice", check=False)  # update: loud
        assert refused.returncode == 2
        assert f"{ME} is not permitted to approve advice" in refused.stderr
        assert "only the operators in authorization.operators may (alice)" in refused.stderr
        drain = lazarus_cli(e2e, "nodes", "drain", e2e.cluster.nodes[3], "--reason", "not mine", check=False)
        assert drain.returncode != 0 and f"{ME} is not permitted to drain node" in drain.stderr

        lazarus_cli(e2e, "mode", "act", "--job", str(job))  # a signal: sent, ignored, recorded
        signal_over_http(e2e, job, "approve_advice", {"generation": 1, "operator": "alice"})  # no identity
        status = await refusals(e2e, job, 2)
        assert status.state == RecoveryState.AWAITING_APPROVAL and restarts(e2e.cluster, job) == 0
        assert [(r.kind, r.operator) for r in status.refused_answers] == [
            ("mode", ME),  # the CLI's note is its user name too
            ("approve", "alice"),  # no identity: only the note, and refused
        ]
        assert "carries no caller identity" in status.refused_answers[1].reason
        assert "refused approve signal for advice generation 1" in lazarus_cli(e2e, "show", str(job)).stdout

        body = {"generation": status.advice.generation, "operator": "curl"}
        signal_over_http(e2e, job, "approve_advice", body, caller={"name": "alice"})
        final = await wait_state(
            e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
        )
    assert final.state == RecoveryState.COMPLETED
    assert final.advice_history[0].decided_by == "alice (note: curl)"
    assert restarts(e2e.cluster, job) == 1
    restore_nodes(e2e.cluster)


async def test_an_operators_cli_approves_and_the_record_names_its_os_user(e2e: E2EStack, job_dir):
    with operators(e2e, ME):
        job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH)
        await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
        approved = lazarus_cli(e2e, "advice", "approve", str(job), "--operator", "on-call")
        assert f"approved by {ME} (note: on-call)" in approved.stdout
        final = await wait_state(
            e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
        )
    assert final.state == RecoveryState.COMPLETED
    assert final.advice_history[0].decided_by == f"{ME} (note: on-call)"
    restore_nodes(e2e.cluster)
