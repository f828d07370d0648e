"""`lazarus worker --role ROLE`: run worker processes (see workers/host.py)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lazarus.config import load_settings

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands


def register(sub: Subcommands) -> None:
    p = sub.add_parser("worker", help="run a Lazarus worker (control, scheduler, telemetry or all roles)")
    p.add_argument(
        "--role",
        default="all",
        choices=["control", "scheduler", "telemetry", "all"],
        help="which worker to run (default all: every role in one process, as the dev stack does)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from lazarus.logging import setup_logging
    from workers.host import ROLES, run

    settings = load_settings(args.config)
    setup_logging(args.log_level or settings.logging.level, args.log_json or settings.logging.json_output)
    return run(settings, list(ROLES) if args.role == "all" else [args.role])
