"""Entry point of the `lazarus` command.

Each subcommand lives in its own module in this package and exposes
``register(subparsers)``; the module adds its parser and sets ``func`` (a
callable taking the parsed ``argparse.Namespace`` and returning an exit code).
Errors derived from :class:`lazarus.errors.LazarusError` are printed as one
clear message, never as a traceback. A mistyped option is answered with the
subcommand's own usage and the closest option it has; a reader that stops
early (``lazarus jobs | head``) ends the command quietly, as it ends Unix tools.
Parsing itself (typed arguments, unknown options) is in :mod:`lazarus.cli.parser`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from pydantic import ValidationError
from temporalio.service import RPCError

from lazarus.cli.parser import LazarusParser, log_level
from lazarus.cli.terminal import TerminalSafe, terminal_safe
from lazarus.errors import LazarusError

# Subcommand modules, in the order `lazarus --help` lists them. A module that is
# missing is skipped so that partial installs still start.
SUBCOMMAND_MODULES = (
    "lazarus.cli.dev",
    "lazarus.cli.demo",
    "lazarus.cli.jobs",
    "lazarus.cli.advice",
    "lazarus.cli.nodes",
    "lazarus.cli.audit",
    "lazarus.cli.diagnose",
    "lazarus.cli.worker",
    "lazarus.cli.node_agent",
)


def build_parser() -> argparse.ArgumentParser:
    parser = LazarusParser(
        prog="lazarus",
        description="Automatic, durable recovery for distributed GPU training jobs on Slurm.",
    )
    parser.add_argument("--config", help="YAML configuration file (default: $LAZARUS_CONFIG)")
    parser.add_argument("--log-json", action="store_true", help="write logs as JSON lines")
    parser.add_argument("--log-level", type=log_level, default=None, help="TRACE, DEBUG, INFO, WARNING or ERROR")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from lazarus.logging import setup_logging

    setup_logging(level=args.log_level or "WARNING", json_output=args.log_json)
    stdout, sys.stdout = sys.stdout, TerminalSafe(sys.stdout)  # job text never drives the terminal
    try:
        return int(args.func(args) or 0)
    except LazarusError as exc:
        print(f"lazarus: {terminal_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except ValidationError as exc:  # an argument no argparse type covers reached a model
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        print(
            terminal_safe(f"lazarus: invalid {exc.title}{f' {where}' if where else ''}: {first['msg']}"),
            file=sys.stderr,
        )
        return 2
    except RPCError as exc:  # Temporal answered, but no: unknown workflow, refused query, bad visibility query
        print(f"lazarus: Temporal refused the request: {terminal_safe(exc.message)}", file=sys.stderr)
        return 2
    except subprocess.TimeoutExpired as exc:
        print(
            f"lazarus: {exc.cmd[0] if exc.cmd else 'a command'} did not answer within {exc.timeout:g} s",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("lazarus: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout


def _reader_went_away() -> int:
    """Our output's reader closed it (``lazarus jobs | head``): stop quietly, as Unix tools do.

    Both streams are pointed at /dev/null first, so that nothing still buffered
    fails again on its way out; the exit status is the one a shell reports for a
    tool ended by SIGPIPE.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a replaced stream without a descriptor: nothing to do
            os.dup2(devnull, stream.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


def run() -> None:
    """Console-script entry: run, flush, and leave without interpreter finalization.

    The Temporal SDK's native core keeps runtime threads; tearing the interpreter
    down around them occasionally crashes at exit (SIGSEGV / "PyGILState_Release"
    after the command already succeeded). Everything the command does is awaited
    and flushed before this point, so skipping finalization loses nothing.
    """
    try:
        try:
            code = main()
        except SystemExit as exc:  # argparse after --help or a usage error (it printed its message already)
            code = _exit_status(exc)
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = _reader_went_away()
    os._exit(code)


def _exit_status(exc: SystemExit) -> int:
    """The status ``sys.exit(code)`` would give, printing a message code to stderr as it would."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    run()
