"""Entry point of the `lazarus` command.

Each subcommand lives in its own module in this package and exposes
``register(subparsers)``; the module adds its parser and sets ``func`` (a
callable taking the parsed ``argparse.Namespace`` and returning an exit code).
Every error is printed as one line on stderr, ``lazarus: <sentence>``, never
as a traceback (an unexpected one's goes to the log at DEBUG level); exit
statuses are in :mod:`lazarus.cli.exits`. A mistyped option is answered by the
subcommand, in one line, with the closest option it has; a reader that stops
early (``lazarus jobs | head``) ends the command quietly, as it ends Unix tools.
Parsing itself (typed arguments, unknown options) is in :mod:`lazarus.cli.parser`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import subprocess
import sys
from collections.abc import Sequence

from pydantic import ValidationError
from temporalio.service import RPCError

from lazarus.cli import exits
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
    "lazarus.cli.policies",
    "lazarus.cli.spares",
    "lazarus.cli.diagnose",
    "lazarus.cli.goodput",
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
        print("lazarus: give a command (`lazarus --help` lists them)", file=sys.stderr)
        return exits.REFUSED
    from lazarus.logging import setup_logging

    setup_logging(level=args.log_level or "WARNING", json_output=args.log_json)
    stdout, sys.stdout = sys.stdout, TerminalSafe(sys.stdout)  # job text never drives the terminal
    try:
        return int(args.func(args) or 0)
    except LazarusError as exc:
        return _refused(str(exc), exc.exit_code)
    except ValidationError as exc:  # an argument no argparse type covers reached a model
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return _refused(f"invalid {exc.title}{f' {where}' if where else ''}: {first['msg']}")
    except RPCError as exc:  # Temporal answered, but no: unknown workflow, refused query, bad visibility query
        return _refused(f"Temporal refused the request: {exc.message}")
    except subprocess.TimeoutExpired as exc:
        return _refused(f"{exc.cmd[0] if exc.cmd else 'a command'} did not answer within {exc.timeout:g} s")
    except KeyboardInterrupt:
        return _refused("interrupted", exits.INTERRUPTED)
    except BrokenPipeError:
        raise  # the reader went away: run() ends quietly
    except Exception as exc:  # a fault of Lazarus itself: still one line; the traceback goes to the log
        from loguru import logger

        logger.opt(exception=exc).debug("unexpected error")
        return _refused(
            f"unexpected error ({type(exc).__name__}: {exc}); `--log-level DEBUG` shows where it happened",
        )
    finally:
        sys.stdout = stdout


def _refused(message: str, status: int = exits.REFUSED) -> int:
    """Print ``message`` as the one line every error is (``lazarus: <sentence>``) and return ``status``."""
    line = "; ".join(part.strip() for part in message.splitlines() if part.strip()) or "failed"
    print(f"lazarus: {terminal_safe(line)}", file=sys.stderr)
    return status


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
    return exits.READER_GONE


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
