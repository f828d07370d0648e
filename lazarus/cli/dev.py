"""`lazarus dev up|down|status|env`: the embedded local stack.

    lazarus dev up [--no-workers] [--no-temporal] [--no-accounting]
    lazarus dev status [--json]
    eval "$(lazarus dev env)"      # then sbatch, squeue, temporal work against the stack
    lazarus dev down

Settings come from the ``dev`` section of the configuration (state directory,
ports, node count, ...). ``up`` writes ``<state_dir>/lazarus.yaml`` for
workers and the CLI. Exit codes (:mod:`lazarus.cli.exits`): 0 done (``status``:
everything up), 1 ``status`` found a component down, 2 bad configuration or a start failure.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lazarus.cli import exits
from lazarus.cli.common import json_option
from lazarus.cli.progress import waiting
from lazarus.config import DevSettings, load_settings
from lazarus.devstack.stack import DevStack, Parts

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands


def register(subparsers: Subcommands) -> None:
    p = subparsers.add_parser(
        "dev",
        help="run the embedded stack: Temporal, workers, a local multi-node Slurm cluster",
        description="Start, stop and inspect the embedded local stack (all state under dev.state_dir).",
    )
    p.add_argument("--state-dir", type=Path, help="override dev.state_dir")
    sub = p.add_subparsers(dest="dev_command", metavar="ACTION", required=True)

    up = sub.add_parser("up", help="start whatever is not running and wait until it answers")
    up.add_argument("--no-workers", action="store_true", help="do not start the Lazarus workers")
    up.add_argument("--no-temporal", action="store_true", help="do not start Temporal (implies --no-workers)")
    up.add_argument("--no-accounting", action="store_true", help="no slurmdbd/MariaDB (sacct will not work)")
    json_option(up, "the resulting status")
    up.set_defaults(func=run_up)

    down = sub.add_parser("down", help="stop everything `up` started, and job processes left by the cluster")
    down.set_defaults(func=run_down)

    status = sub.add_parser("status", help="show each component up or down, with pid and port")
    json_option(status, "each component (pid, port, URLs)")
    status.set_defaults(func=run_status)
    exits.declare(status, {exits.FOUND: "a component of the stack is down (the output says which)"})

    env = sub.add_parser("env", help='print shell exports: eval "$(lazarus dev env)"')
    env.set_defaults(func=run_env)


def _dev_settings(args: argparse.Namespace) -> DevSettings:
    dev = load_settings(args.config).dev
    if args.state_dir:
        dev = dev.model_copy(update={"state_dir": args.state_dir.resolve()})
    if getattr(args, "no_accounting", False):
        dev = dev.model_copy(update={"accounting": False})
    return dev


def _stack(args: argparse.Namespace) -> DevStack:
    parts = Parts(temporal=not getattr(args, "no_temporal", False), workers=not getattr(args, "no_workers", False))
    return DevStack(_dev_settings(args), parts)


def run_up(args: argparse.Namespace) -> int:
    stack = _stack(args)
    with waiting("starting the embedded stack and waiting until it answers", quiet=args.json):
        report = stack.up()
    if args.json:
        print(stack.status().model_dump_json(indent=2))
        return 0
    if report.started:
        print(f"started: {' '.join(report.started)}")
    if report.already_up:
        print(f"already running: {' '.join(report.already_up)}")
    for note in report.notes:
        print(note)
    status = stack.status()
    if status.ui_url:
        print(f"Temporal UI: {status.ui_url}")
    if status.http_api_url:
        print(f"Temporal HTTP API: {status.http_api_url} (docs/http-api.md)")
    print(f'ready in {report.seconds:.1f} s; use it from a shell with: eval "$(lazarus dev env)"')
    return 0


def run_down(args: argparse.Namespace) -> int:
    with waiting("stopping the embedded stack"):
        stopped = _stack(args).down()
    print(f"stopped: {' '.join(stopped)}" if stopped else "nothing was running")
    return 0


def run_status(args: argparse.Namespace) -> int:
    status = _stack(args).status()
    print(status.model_dump_json(indent=2) if args.json else status.render())
    return 0 if status.all_up else 1


def run_env(args: argparse.Namespace) -> int:
    stack = _stack(args)
    dev = stack.dev
    venv_bin = str(Path(sys.executable).parent)
    path = [venv_bin] + [p for p in os.environ.get("PATH", "").split(":") if p and p != venv_bin]
    exports = {
        "SLURM_CONF": str(stack.layout.slurm_conf),
        "LAZARUS_CONFIG": str(stack.layout.lazarus_yaml),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{dev.temporal_port}",
        "TEMPORAL_NAMESPACE": "default",
        "TEMPORAL_HTTP_API": f"http://127.0.0.1:{dev.temporal_http_port}",
        "PATH": ":".join(path),
    }
    for name, value in exports.items():
        print(f"export {name}={shlex.quote(value)}")
    print(f"# Temporal UI: http://127.0.0.1:{dev.temporal_ui_port}")
    return 0
