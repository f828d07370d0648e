"""`lazarus spares [--json]`: the hot-spare pools the policies name, as the node ledger keeps them.

Each pool is a Slurm reservation a policy names (``spares: {reservation: ..., count: ...}``). The ledger
replaces a member Lazarus excludes or drains with a healthy idle node of the general pool; this command shows,
per pool, its members at the last check, the spares free and used, the replacements made, and the members still
waiting for a free healthy node. ``--json`` prints one object per pool, one per line, like every listing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from lazarus.cli.common import json_option, print_json_lines, run_async
from lazarus.cli.nodes import _handle, _view
from lazarus.cli.terminal import terminal_safe
from lazarus.models.ledger import LedgerView
from lazarus.models.spares import SparePool, SparePoolState

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "spares",
        help="the hot-spare pools: members, spares free and used, refills, members waiting for a free node",
        description="List the spare pools the policies name, as the node ledger last checked them: the "
        "reservation's members, spares free and used, members replaced from the general pool, and members "
        "still waiting for a free healthy node.",
    )
    json_option(p, "spare pool", listing=True)
    p.set_defaults(func=lambda a: run_async(_list, a))


def rows(view: LedgerView) -> list[dict[str, Any]]:
    """One object per pool the ledger keeps: the pool's configuration and its state at the last check."""
    states = {s.reservation: s for s in view.spares}
    return [_row(pool, states.get(pool.reservation)) for pool in view.spare_pools]


def _row(pool: SparePool, state: SparePoolState | None) -> dict[str, Any]:
    checked = state or SparePoolState(reservation=pool.reservation, count=pool.count)
    return {**checked.model_dump(mode="json"), "retry_interval_s": pool.retry_interval.total_seconds()}


def _note(row: dict[str, Any]) -> str:
    if row["checked_at"] is None:
        return "not checked yet"
    if row["error"]:
        return str(row["error"])
    if row["short"]:
        return f"waiting for a free healthy node to replace {', '.join(row['short'])} since {row['short_since']}"
    return row["swaps"][-1] if row["swaps"] else "healthy"


async def _list(args: argparse.Namespace) -> int:
    settings, handle = await _handle(args)
    found = rows(await _view(settings, handle))
    if args.json:
        print_json_lines(found)
        return 0
    if not found:
        print("no policy names a spare pool")
        return 0
    print(f"{'RESERVATION':20} {'SPARES':>6} {'FREE':>4} {'USED':>4} {'REFILLS':>7}  {'MEMBERS':24} NOTE")
    for row in found:
        members = ",".join(row["members"]) or "-"
        print(
            f"{terminal_safe(row['reservation']):20} {row['count']:>6} {row['spares_free']:>4} {row['spares_used']:>4} "
            f"{row['refills']:>7}  {members:24} {terminal_safe(_note(row))}"
        )
    return 0
