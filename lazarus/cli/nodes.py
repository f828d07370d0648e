"""`lazarus nodes [--json]`: the cluster's node ledger next to Slurm's own node states;
`lazarus nodes resume|drain <node>`; `lazarus nodes policy`: the ledger's policy, changed while it runs."""

from __future__ import annotations

import argparse
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import ValidationError
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from lazarus.cli.common import (
    failure_message,
    json_option,
    node_arg,
    operator_name,
    print_json,
    run_async,
    settings_from,
    text_arg,
)
from lazarus.cli.progress import waiting
from lazarus.cli.terminal import terminal_safe
from lazarus.config import Settings
from lazarus.errors import LazarusError
from lazarus.models.ledger import DrainRequest, LedgerPolicy, LedgerView, NodeRecord, PolicyChange, ResumeRequest
from lazarus.models.names import ledger_id
from lazarus.models.slurm import NodeActionResult, NodeState
from lazarus.slurm.client import SlurmClient
from lazarus.temporal_client import connect
from workflows.node_ledger import NodeLedgerWorkflow

if TYPE_CHECKING:
    from temporalio.workflow import UpdateMethodMultiParam

    from lazarus.cli.parser import Subcommands

# The operator's requests to the ledger (both name a node and an operator).
_Request = TypeVar("_Request", ResumeRequest, DrainRequest)

# What a DrainRequest accepts as its reason.
REASON_MAX: int = next(m.max_length for m in DrainRequest.model_fields["reason"].metadata if hasattr(m, "max_length"))


class LedgerUnavailable(LazarusError):
    pass


class NodeActionRefused(LazarusError):
    """An operator's drain or resume did not happen; the message says why, in Slurm's words."""


class BadLedgerPolicy(LazarusError):
    """A `lazarus nodes policy` value the ledger policy does not accept."""


POLICY_OPTIONS = {  # option → LedgerPolicy field
    "--lemon-job-count": "lemon_job_count",
    "--lemon-window": "lemon_window",
    "--max-drain-fraction": "max_drain_fraction",
    "--reconcile-interval": "reconcile_interval",
    "--max-implications": "max_implications",
    "--corroborating-users": "corroborating_users",
}


def register(sub: Subcommands) -> None:
    p = sub.add_parser("nodes", help="the node ledger: implicated nodes, drains, lemon nodes; resume a node")
    json_option(p, "the ledger (policy, drain budget, nodes, each with Slurm's state)")
    p.set_defaults(func=lambda a: run_async(_list, a))
    nsub = p.add_subparsers(dest="nodes_command", metavar="ACTION")
    r = nsub.add_parser("resume", help="return a drained node to service (recorded in the ledger)")
    r.add_argument("node", type=node_arg, help="one Slurm node name")
    r.add_argument("--comment", help="why, recorded in the ledger")
    r.set_defaults(func=lambda a: run_async(_resume, a))
    d = nsub.add_parser("drain", help="take a node out of service by hand (recorded in the ledger)")
    d.add_argument("node", type=node_arg, help="one Slurm node name")
    d.add_argument(
        "--reason",
        required=True,
        type=text_arg("reason", max_length=REASON_MAX),
        help=f"why (shown by sinfo -R; at most {REASON_MAX} characters)",
    )
    d.set_defaults(func=lambda a: run_async(_drain, a))
    pol = nsub.add_parser(
        "policy",
        help="show the ledger's policy, or change it while the ledger runs "
        "(until the workers restart with the configured one)",
    )
    for option, field in POLICY_OPTIONS.items():
        unit = " (seconds or ISO 8601)" if field in ("lemon_window", "reconcile_interval") else ""
        pol.add_argument(
            option, dest=field, metavar="VALUE", help=f"{LedgerPolicy.model_fields[field].description}{unit}"
        )
    json_option(pol, "the policy in force")
    pol.set_defaults(func=lambda a: run_async(_policy, a))


async def _handle(args: argparse.Namespace) -> tuple[Settings, WorkflowHandle[Any, Any]]:
    settings = settings_from(args)
    client = await connect(settings)
    return settings, client.get_workflow_handle(ledger_id(settings.cluster))


async def _view(settings: Settings, handle: WorkflowHandle[Any, Any]) -> LedgerView:
    try:
        return await handle.query(NodeLedgerWorkflow.view)
    except RPCError as exc:
        raise LedgerUnavailable(
            f"no node ledger for cluster {settings.cluster} (is a telemetry worker running?): {exc.message}"
        ) from None


async def _slurm_nodes(settings: Settings) -> tuple[dict[str, NodeState], str | None]:
    """Slurm's current node states through the adapter, or an empty map and why it could not be read."""
    slurm = SlurmClient.from_settings(settings.scheduler)
    try:
        return {n.name: n for n in await slurm.nodes()}, None
    except LazarusError as exc:
        return {}, str(exc)
    finally:
        await slurm.close()


def _row(rec: NodeRecord, slurm: NodeState | None) -> dict[str, Any]:
    """One record for --json: the ledger's fields, its drained view, Slurm's state and whether they agree."""
    return {
        **rec.model_dump(mode="json"),
        "drained": rec.drained,
        "slurm": slurm and {"state": slurm.state, "reason": slurm.reason, "drained": slurm.drained},
        "agrees": None if slurm is None else rec.drained == slurm.drained,
    }


async def _list(args: argparse.Namespace) -> int:
    settings, handle = await _handle(args)
    view = await _view(settings, handle)
    slurm, slurm_error = await _slurm_nodes(settings)
    if args.json:
        print_json(
            {
                **view.model_dump(mode="json"),
                "slurm_error": slurm_error,
                "nodes": [_row(rec, slurm.get(rec.node)) for rec in view.nodes],
            }
        )
        return 0
    if slurm_error:
        print(f"Slurm's node states unavailable: {slurm_error}")
    if view.operators:
        print(f"operators (authorization.operators): {', '.join(view.operators)}")
    if view.refused:
        more = f" ({len(view.refused) - 1} earlier)" if len(view.refused) > 1 else ""
        print(f"last refused message{more}: {terminal_safe(view.refused[-1])}")
    if not view.nodes:
        print("no node has been implicated")
        return 0
    print(f"{'NODE':12} {'JOBS':>4} {'USERS':>5}  {'DRAINED':8} {'SLURM':16} LAST SIGNATURE / NOTE")
    for rec in view.nodes:
        last = rec.implications[-1] if rec.implications else None
        note = rec.refused[-1] if rec.refused else (rec.drain_reason or "")
        if rec.resumed_by:
            note = f"resumed by {rec.resumed_by} at {rec.resumed_at:%Y-%m-%d %H:%M}"
        elif rec.drained_by:
            note = f"drained by {rec.drained_by}: {rec.drain_reason}"
        if rec.waiting and not rec.drained:
            note = rec.waiting
        now = slurm.get(rec.node)
        state = now.state.lower() if now else "?"
        if now and now.drained != rec.drained:  # the ledger has not caught up yet: it reconciles periodically
            state = f"{state} ≠"
            note = f"ledger and Slurm disagree; {note}"
        users = len({i.user or "?" for i in rec.implications})
        print(
            f"{rec.node:12} {len({i.job_id for i in rec.implications}):>4} {users:>5}  "
            f"{'yes' if rec.drained else 'no':8} {state:16} {(last.signature if last else '-') or '-'}  {note}"
        )
    return 0


async def _operator_update(
    args: argparse.Namespace,
    update: UpdateMethodMultiParam[[NodeLedgerWorkflow, _Request], Coroutine[Any, Any, NodeActionResult]],
    request: _Request,
    verb: str,
) -> int:
    settings, handle = await _handle(args)
    try:
        # temporalio's ``@workflow.update(name=...)`` keeps an async handler's coroutine as the update's
        # result type; the update itself answers with what the coroutine returns
        with waiting(f"waiting for the node ledger to answer ({request.node})"):
            result = cast("NodeActionResult", await handle.execute_update(update, request))
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise NodeActionRefused(
                f"{request.node} was not {verb}: no node ledger runs for cluster {settings.cluster} yet (the "
                "telemetry worker starts it on its first cycle: is a worker running?); nothing was changed"
            ) from None
        raise NodeActionRefused(f"{request.node} was not {verb}: {failure_message(exc)}") from None
    except WorkflowUpdateFailedError as exc:
        raise NodeActionRefused(f"{request.node} was not {verb}: {failure_message(exc)}") from None
    state = ", ".join(f"{n.name} {n.state}" for n in result.nodes) or verb
    print(f"{request.node}: {verb} by {request.operator}: {state}")
    return 0


async def _resume(args: argparse.Namespace) -> int:
    request = ResumeRequest(node=args.node, operator=operator_name(), comment=args.comment)
    return await _operator_update(args, NodeLedgerWorkflow.resume_node, request, "returned to service")


async def _drain(args: argparse.Namespace) -> int:
    request = DrainRequest(node=args.node, operator=operator_name(), reason=args.reason)
    return await _operator_update(args, NodeLedgerWorkflow.drain_node, request, "taken out of service")


def _changed_policy(base: LedgerPolicy, changes: dict[str, str]) -> LedgerPolicy:
    try:
        return LedgerPolicy.model_validate({**base.model_dump(), **changes})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise BadLedgerPolicy(f"{err['loc'][0]}: {err['msg']}") from None


async def _policy(args: argparse.Namespace) -> int:
    changes = {field: getattr(args, field) for field in POLICY_OPTIONS.values() if getattr(args, field) is not None}
    _changed_policy(LedgerPolicy(), changes)  # a bad value is refused before anything connects
    settings, handle = await _handle(args)
    view = await _view(settings, handle)
    policy = view.policy
    if changes:
        policy = _changed_policy(view.policy, changes)
        await handle.signal(NodeLedgerWorkflow.set_policy, PolicyChange(policy=policy, by=operator_name()))
    if args.json:
        print_json(policy)
        return 0
    who = operator_name() if changes else (view.policy_set_by or "the configuration when the ledger started")
    print(f"node ledger policy of cluster {settings.cluster} ({'sent' if changes else 'set'} by {who}):")
    for field in POLICY_OPTIONS.values():
        print(f"  {field:20} {getattr(policy, field)}")
    if changes:
        print("the workers send the configured policy (ledger: in the configuration) again when they start")
    return 0
