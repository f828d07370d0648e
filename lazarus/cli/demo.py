"""`lazarus demo [--mode monitor|act]`: the end-to-end story on the embedded stack, as an operator sees it.

A small training job runs on two nodes (one rank each), prints progress and
saves checkpoints; at step 15 the GPU of rank 1's node fails: its fake NVML
raises Xid 79 (the node agent sees it), the rank prints the "fallen off the
bus" kernel line and dies, and the other rank dies as its victim. Lazarus
detects it, blames that node (not the victim's), advises a restart excluding it, requeues the
job (in monitor mode after an approval), and the new attempt resumes from the
checkpoint on other nodes and finishes. The node ledger drains the node because
its agent corroborates the job's word (a job's output alone would only exclude
it from that job); the demo shows the ledger's note.

In monitor mode (the default) the story is told from the operator's side: the advice awaiting approval
arrives as a notice at the dev stack's webhook inbox (with its link to the job's history in the Temporal
UI), the demo approves it through Temporal's own HTTP API exactly as docs/http-api.md documents (it prints
the curl command it is equivalent to), the node-drained notice follows, and at the end the workers' metrics
endpoints show the recovery (recoveries by outcome, detection and action latency, drains).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from temporalio.service import RPCError

from lazarus.cli import exits
from lazarus.cli.common import operator_name, settings_from, ui_link
from lazarus.cli.demo_operator import (
    HttpApiError,
    Inbox,
    approve_request,
    read_story_metrics,
    render_notice,
    send,
    wait_for_notice,
)
from lazarus.cli.progress import waiting
from lazarus.cli.timeline import render_timeline
from lazarus.config import DevSettings, Settings
from lazarus.devstack.layout import Layout
from lazarus.devstack.node_agents import fake_gpus
from lazarus.devstack.stack import DevStack
from lazarus.devstack.status import StackStatus
from lazarus.errors import LazarusError
from lazarus.models.names import workflow_id
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    TERMINAL_STATES,
    JobStatus,
    ModeChange,
    RecoveryState,
)
from lazarus.models.slurm import NodeAction, SubmitRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import SlurmError
from lazarus.temporal_client import connect
from workflows.job_recovery import JobRecoveryWorkflow

if TYPE_CHECKING:
    from temporalio.client import Client, WorkflowHandle

    from lazarus.cli.parser import Subcommands


class DemoError(LazarusError):
    pass


def register(sub: Subcommands) -> None:
    p = sub.add_parser("demo", help="run the end-to-end recovery story on the embedded stack (lazarus dev up)")
    p.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default="monitor",
        help="monitor (default): Lazarus notifies the webhook inbox and waits for an approval, which the demo "
        "sends over Temporal's HTTP API; act: Lazarus restarts on its own",
    )
    p.add_argument(
        "--fault",
        default="xid79",
        choices=["xid79", "ecc", "app-error", "hang"],
        help="what goes wrong at step 15 (default xid79: the GPU falls off the bus)",
    )
    p.add_argument("--timeout", type=float, default=180, help="give up after this many seconds")
    p.set_defaults(func=lambda a: asyncio.run(_demo(a)))
    exits.declare(p, {exits.FOUND: "the story ran, but the job did not complete (the timeline says why)"})


DEMO_NODES = ("node1", "node2", "node3", "node4")
_STACK_HINT = "; is the stack up? (`lazarus dev up`)"
# A notice is posted in the background within a second or two of what it tells; past this, say it is missing.
NOTICE_WAIT_S = 20.0
METRICS_WAIT_S = 15.0


async def _prepare_nodes(slurm: SlurmClient, dev: DevSettings) -> None:
    """Earlier demo runs drain a node and break its fake GPU: repair them and return them to service."""
    state = {node.name: node for node in await slurm.nodes()}
    for name in DEMO_NODES:
        node = state.get(name)
        if node is not None and (node.drained or node.down):
            await slurm.resume(NodeAction(nodes=[name]))
            print(f"  (returned {name} to service after an earlier demo)")
        gpus = fake_gpus(Layout(dev.state_dir), name)
        if gpus.state.exists():  # the dev stack runs node agents: their fake GPUs are healthy again
            gpus.repair(dev.gpus_per_node)


def _script(workdir: Path, fault: str, layout: Layout) -> Path:
    repo_python = sys.executable
    fault_step = 15
    script = workdir / "train.sbatch"
    fake_gpu_dir = fake_gpus(layout, "node1").directory.parent
    script.write_text(
        "#!/bin/bash\n"
        f"srun --label --kill-on-bad-exit=1 {repo_python} -m lazarus.demo.train --steps 40 --step-time 0.25 "
        f"--ckpt-every 10 --ckpt-dir {workdir / 'ckpt'} --fault {fault} --fault-rank 1 "
        f"--fault-step {fault_step} --fault-attempts 0 --fake-gpu-dir {fake_gpu_dir}\n"
    )
    return script


async def _start_job(settings: Settings, workdir: Path, fault: str) -> int:
    """Free the demo nodes and submit the training job with the opt-in comment; returns its id."""
    request = SubmitRequest(
        args=[
            "-N2",
            "--ntasks-per-node=1",
            "--gres=gpu:1",
            "--time=10",
            "--open-mode=append",
            "-J",
            "lazarus-demo",
            f"--output={workdir / 'train-%j.out'}",
            str(_script(workdir, fault, Layout(settings.dev.state_dir))),
        ],
        comment=json.dumps({"lazarus": {"policy": "default"}}),
    )
    try:
        async with SlurmClient.local(settings.scheduler, command_timeout=30) as slurm:
            await _prepare_nodes(slurm, settings.dev)
            return (await slurm.submit(request)).job_id
    except SlurmError as exc:
        raise DemoError(f"{exc}{_STACK_HINT}") from None


async def _wait_for_workflow(client: Client, wid: str, deadline: float) -> tuple[WorkflowHandle[Any, Any], JobStatus]:
    handle = client.get_workflow_handle(wid)
    while time.monotonic() < deadline:
        try:
            return handle, await handle.query(JobRecoveryWorkflow.status)
        except RPCError:
            await asyncio.sleep(0.2)
    raise DemoError("the job was not picked up by Lazarus: are the workers running? (`lazarus dev status`)")


def _narrate(status: JobStatus, seen: set[str]) -> None:
    def once(key: str, text: str) -> None:
        if key not in seen:
            seen.add(key)
            print(f"  [{datetime.now():%H:%M:%S}] {text}")

    for a in status.attempts:
        if a.started_at:
            once(
                f"start{a.index}",
                f"attempt {a.index} running on {','.join(a.nodes)}"
                f"{' (excluding ' + ','.join(a.excluded_nodes) + ')' if a.excluded_nodes else ''}",
            )
        if a.last_checkpoint:
            once(f"ckpt{a.index}-{a.last_checkpoint}", f"attempt {a.index}: checkpoint at step {a.last_checkpoint}")
        if a.anomaly:
            d = a.anomaly.diagnosis
            once(
                f"anomaly{a.index}",
                f"detected {a.anomaly.kind.value}: {d.signature} ({d.category.value}) on "
                f"{','.join(d.implicated_nodes) or 'unknown node'}, confidence {d.confidence:.2f}",
            )
    for adv in status.advice_history:
        once(
            f"advice{adv.generation}",
            f"advice {adv.generation}: {adv.action.value}"
            f"{' excluding ' + ','.join(adv.exclude_nodes) if adv.exclude_nodes else ''}: {adv.reason}",
        )
        if adv.status.value not in ("pending",):
            once(
                f"advice{adv.generation}-{adv.status.value}",
                f"advice {adv.generation} {adv.status.value}{' by ' + adv.decided_by if adv.decided_by else ''}",
            )
    for note in status.ledger_notes:
        once(f"ledger-{note}", f"node ledger: {note}")
    once(f"state-{status.state.value}", f"recovery state: {status.state.value}")


async def _demo(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    stack = DevStack(settings.dev).status()
    client = await connect(settings)
    workdir = settings.dev.state_dir / "demo" / datetime.now().strftime("%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True, exist_ok=True)
    mark = Inbox.mark(stack.notices_file)
    job_id = await _start_job(settings, workdir, args.fault)
    wid = workflow_id(settings.cluster, job_id)
    print(
        f"Lazarus demo ({args.mode} mode): job {job_id} trains on 2 of the 4 nodes; the GPU of "
        f"rank 1 will fail at step 15.\n  output: {workdir / f'train-{job_id}.out'}\n  history: {ui_link(settings, wid)}"
    )
    deadline = time.monotonic() + args.timeout
    with waiting(f"waiting for Lazarus to pick up job {job_id}"):
        handle, status = await _wait_for_workflow(client, wid, deadline)
    await handle.signal(
        JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode(args.mode), scope="job", operator="lazarus demo")
    )
    inbox = Inbox(stack.notices_file, wid, mark)
    seen: set[str] = set()
    answered: set[int] = set()
    while time.monotonic() < deadline:
        status = await handle.query(JobRecoveryWorkflow.status)
        _narrate(status, seen)
        for entry in inbox.new():
            print(render_notice(entry))
        advice = status.advice
        if status.state == RecoveryState.AWAITING_APPROVAL and advice and advice.generation not in answered:
            answered.add(advice.generation)
            await _approve_over_http(settings, stack, inbox, job_id, advice.generation)
            continue
        if status.state in TERMINAL_STATES:
            break
        await asyncio.sleep(0.5)
    else:
        raise DemoError(f"the demo did not finish within {args.timeout:.0f} s; see `lazarus show {job_id}`")
    drains = any(a.drain_nodes for a in status.advice_history) and stack.notices_file is not None
    if drains and not await wait_for_notice(inbox, "node-drained", None, NOTICE_WAIT_S):
        print("  (no node-drained notice reached the inbox: the ledger's note above says why)")
    print()
    print(render_timeline(status, ui_link(settings, wid)))
    await _show_metrics(stack)
    return 0 if status.state == RecoveryState.COMPLETED or args.fault == "app-error" else 1


async def _approve_over_http(
    settings: Settings, stack: StackStatus, inbox: Inbox, job_id: int, generation: int
) -> None:
    """What an operator does with the notice: approve advice ``generation`` through Temporal's HTTP API."""
    if stack.notices_file is None:
        print("  (the stack runs no webhook inbox, so no notice: `lazarus dev up` with the workers starts one)")
    elif not await wait_for_notice(inbox, "advice-pending", generation, NOTICE_WAIT_S):
        print(f"  (no notice for advice {generation} reached the inbox in {NOTICE_WAIT_S:.0f} s: see the workers' log)")
    if stack.http_api_url is None:
        raise DemoError(f"the stack runs no Temporal HTTP API to approve through{_STACK_HINT}")
    operator = operator_name()
    request = approve_request(
        stack.http_api_url,
        settings.temporal.namespace,
        inbox.workflow_id,
        job_id,
        settings.cluster,
        generation,
        operator,
    )
    print(f"  {operator} approves advice {generation} over Temporal's HTTP API (docs/http-api.md); the demo sends")
    print("  the request this command makes:")
    print("\n".join(f"    {line}" for line in request.curl().splitlines()))
    try:
        await asyncio.to_thread(send, request)
    except HttpApiError as exc:
        raise DemoError(str(exc)) from None
    print("  Temporal took the approve_advice signal (HTTP 200); the workflow checks the generation and acts")


async def _show_metrics(stack: StackStatus) -> None:
    """The recovery as the workers' metrics endpoints tell it (what a dashboard and the alerts read)."""
    if not stack.metrics_urls:
        print("\n(the workers serve no metrics: dev.metrics_port and dev.temporal_metrics_port are 0)")
        return
    found = await read_story_metrics(
        stack.metrics_urls,
        lambda lines: any(line.startswith("lazarus_recoveries_total") for line in lines),
        METRICS_WAIT_S,
    )
    print("\nThe recovery in the workers' metrics (counted since the workers started; docs/metrics.md):")
    for url, lines in found.items():
        if lines:
            print(f"  {url}")
            print("\n".join(f"    {line}" for line in lines))
    if not any(found.values()):
        print("  (none of the recovery's metrics yet: the workers' log says why)")
