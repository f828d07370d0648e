"""Exit statuses of the `lazarus` command: one meaning for each number in every subcommand.

Every subcommand exits 0 when it did what was asked, 2 when it refused (a usage error, or an error it
explains in one sentence), 130 when interrupted and 141 when the reader of its output went away
(``lazarus jobs | head``). A subcommand whose status also reports what it found (1: a component
down, a job Lazarus ignores) or a condition of its own (3: no NVML) declares it with :func:`declare`.
The declared statuses are part of the subcommand's parser: its ``--help`` lists them, and
``scripts/gen_cli_docs.py`` writes them to docs/cli.md.
"""

from __future__ import annotations

import signal
from typing import Protocol

OK = 0
FOUND = 1
REFUSED = 2
INTERRUPTED = 128 + signal.SIGINT
READER_GONE = 128 + signal.SIGPIPE

COMMON: dict[int, str] = {
    OK: "done",
    REFUSED: "refused: a usage error, or an error explained in one sentence on stderr",
    INTERRUPTED: "interrupted (Ctrl-C)",
    READER_GONE: "the reader of the output went away (`| head`); the command stopped quietly",
}


class Declares(Protocol):
    """A parser that carries its exit statuses (:class:`lazarus.cli.parser.LazarusParser`)."""

    exit_codes: dict[int, str]


def declare(parser: Declares, statuses: dict[int, str]) -> None:
    """Add the statuses only this subcommand uses (or a more precise wording of a common one)."""
    parser.exit_codes = dict(sorted({**parser.exit_codes, **statuses}.items()))


def describe(codes: dict[int, str]) -> str:
    """The statuses as the end of ``--help`` lists them."""
    return "exit status:\n" + "\n".join(f"  {code:<4}{meaning}" for code, meaning in codes.items())
