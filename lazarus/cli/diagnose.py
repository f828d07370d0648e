"""``lazarus diagnose FILE... [--json] [--nodes node[1-4]] [--tasks-per-node N]``.

Offline diagnosis of a failed job's logs with the same engine the recovery
workflow uses. ``--json`` prints exactly the :class:`~lazarus.models.diagnosis.Diagnosis`
contract; the default is a short human summary. Exit 0 with a result for any
readable input; a missing, unreadable or non-regular file is a clear error and
exit 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lazarus.cli.common import json_option
from lazarus.models.diagnosis import Diagnosis

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands


def register(subparsers: Subcommands) -> None:
    parser = subparsers.add_parser(
        "diagnose",
        help="diagnose a failed job from its log files",
        description="Find the root cause of a training failure in log files (Slurm output, kernel logs, ...).",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="log files of one job attempt")
    json_option(parser, "the Diagnosis (the documented contract)")
    parser.add_argument("--nodes", help="the job's Slurm node list, e.g. node[1-4], to name nodes from ranks")
    parser.add_argument(
        "--tasks-per-node", type=int, default=None, help="ranks per node (block distribution; default 1)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lazarus.detection.layout import RankLayout
    from lazarus.detection.reader import diagnose_files
    from lazarus.errors import ConfigError

    layout = None
    if args.tasks_per_node is not None and args.tasks_per_node < 1:
        raise ConfigError("--tasks-per-node must be at least 1")
    if args.nodes:
        layout = RankLayout.from_slurm(args.nodes, args.tasks_per_node)
    elif args.tasks_per_node is not None:
        raise ConfigError("--tasks-per-node needs --nodes (the job's node list)")
    result = diagnose_files(args.files, layout=layout)
    text = result.model_dump_json(indent=2) if args.json else render(result)
    print(text)  # a closed pipe (`| head`) is handled once, in lazarus.cli.main.run
    return 0


def render(result: Diagnosis) -> str:
    """A few readable lines: verdict, advice, nodes, explanation, evidence, notes."""
    if result.failure_kind.value == "none":
        lines = ["No failure found.", result.explanation]
    else:
        advice = result.retry_advice.value.replace("_", " ") if result.retry_advice else "none"
        lines = [
            f"{result.failure_kind.value.upper()} ({result.category.value}) - signature {result.signature}",
            f"advice: {advice}; implicated nodes: {', '.join(result.implicated_nodes) or 'none'}; "
            f"confidence {result.confidence:.2f}",
            result.explanation,
        ]
    if result.evidence:
        lines.append("evidence:")
        lines += [f"  {e.file}:{e.line_no} [{e.rule}] {e.text}" for e in result.evidence[:8]]
    if result.notes:
        lines.append("notes:")
        lines += [f"  {note}" for note in result.notes]
    return "\n".join(lines)
