"""`lazarus nodes [--json]`, `lazarus nodes resume <node>`: the cluster's node ledger."""

from __future__ import annotations

import argparse

from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from lazarus.cli.common import node_arg, operator_name, print_json, run_async, settings_from, text_arg
from lazarus.errors import LazarusError
from lazarus.models.ledger import DrainRequest, ResumeRequest
from lazarus.temporal_client import connect
from workflows.node_ledger import NodeLedgerWorkflow, ledger_id


# What a DrainRequest accepts as its reason.
REASON_MAX: int = next(m.max_length for m in DrainRequest.model_fields["reason"].metadata if hasattr(m, "max_length"))


class LedgerUnavailable(LazarusError):
    pass


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("nodes", help="the node ledger: implicated nodes, drains, lemon nodes; resume a node")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=lambda a: run_async(_list, a))
    nsub = p.add_subparsers(dest="nodes_command", metavar="ACTION")
    r = nsub.add_parser("resume", help="return a drained node to service (recorded in the ledger)")
    r.add_argument("node", type=node_arg)
    r.add_argument("--comment")
    r.set_defaults(func=lambda a: run_async(_resume, a))
    d = nsub.add_parser("drain", help="take a node out of service by hand (recorded in the ledger)")
    d.add_argument("node", type=node_arg)
    d.add_argument("--reason", required=True, type=text_arg("reason", max_length=REASON_MAX),
                   help=f"why (shown by sinfo -R; at most {REASON_MAX} characters)")
    d.set_defaults(func=lambda a: run_async(_drain, a))


async def _handle(args: argparse.Namespace):
    settings = settings_from(args)
    client = await connect(settings)
    return settings, client.get_workflow_handle(ledger_id(settings.cluster))


async def _list(args: argparse.Namespace) -> int:
    settings, handle = await _handle(args)
    try:
        view = await handle.query(NodeLedgerWorkflow.view)
    except RPCError as exc:
        raise LedgerUnavailable(f"no node ledger for cluster {settings.cluster} (is a telemetry worker running?): "
                                f"{exc.message}") from None
    if args.json:
        print_json(view)
        return 0
    if not view.nodes:
        print("no node has been implicated")
        return 0
    print(f"{'NODE':12} {'JOBS':>4}  {'DRAINED':8} LAST SIGNATURE / NOTE")
    for rec in view.nodes:
        last = rec.implications[-1] if rec.implications else None
        note = rec.refused[-1] if rec.refused else (rec.drain_reason or "")
        if rec.resumed_by:
            note = f"resumed by {rec.resumed_by} at {rec.resumed_at:%Y-%m-%d %H:%M}"
        elif rec.drained_by:
            note = f"drained by {rec.drained_by}: {rec.drain_reason}"
        print(f"{rec.node:12} {len({i.job_id for i in rec.implications}):>4}  "
              f"{'yes' if rec.drained_by_lazarus or rec.drained_by else 'no':8} {(last.signature if last else '-') or '-'}  {note}")
    return 0


async def _operator_update(args: argparse.Namespace, update, request, verb: str) -> int:
    settings, handle = await _handle(args)
    try:
        result = await handle.execute_update(update, request)
    except (WorkflowUpdateFailedError, RPCError) as exc:
        raise LedgerUnavailable(f"{verb} of {request.node} failed: {getattr(exc, 'cause', None) or exc}") from None
    state = ", ".join(f"{n.name} {n.state}" for n in result.nodes) or verb
    print(f"{request.node}: {verb} by {request.operator}: {state}")
    return 0


async def _resume(args: argparse.Namespace) -> int:
    request = ResumeRequest(node=args.node, operator=operator_name(), comment=args.comment)
    return await _operator_update(args, NodeLedgerWorkflow.resume_node, request, "returned to service")


async def _drain(args: argparse.Namespace) -> int:
    request = DrainRequest(node=args.node, operator=operator_name(), reason=args.reason)
    return await _operator_update(args, NodeLedgerWorkflow.drain_node, request, "taken out of service")
