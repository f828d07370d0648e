"""The `lazarus` argument parser: unknown options refused by the subcommand they were given to.

A mistyped option (``lazarus advice approve 14 --generaton 1``) is answered by
that subcommand with the closest option it has, in one line naming the
subcommand and its ``--help``, exit 2, instead of argparse's top-level usage.
Each parser carries its exit statuses (:mod:`lazarus.cli.exits`), listed at
the end of its ``--help``.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, TypeAlias, TypeVar, overload

from lazarus.cli import exits

_N = TypeVar("_N")

LOG_LEVELS = ("TRACE", "DEBUG", "INFO", "SUCCESS", "WARNING", "ERROR", "CRITICAL")


class LazarusParser(argparse.ArgumentParser):
    """An argument parser that refuses unknown options from the subcommand they were given to.

    Plain argparse collects what a subcommand did not recognise and lets the
    top-level parser refuse it, with the top-level usage. Here the deepest
    subcommand chosen refuses it, with its own usage and the closest option it
    does have. A subcommand that fails for another reason while one of its
    options is unknown (``--reson`` leaves ``--reason`` missing) names the
    unknown option instead: it is the likelier cause.
    """

    _given: Sequence[str] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_codes: dict[int, str] = dict(exits.COMMON)

    def format_help(self) -> str:
        return f"{super().format_help()}\n{exits.describe(self.exit_codes)}\n"

    @overload
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(self, args: Iterable[str] | None, namespace: _N) -> tuple[_N, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...
    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        given = list(sys.argv[1:] if args is None else args)
        self._given = given
        return super().parse_known_args(None if args is None else given, namespace)

    @overload
    def parse_args(self, args: Iterable[str] | None = None, namespace: None = None) -> argparse.Namespace: ...
    @overload
    def parse_args(self, args: Iterable[str] | None, namespace: _N) -> _N: ...
    @overload
    def parse_args(self, *, namespace: _N) -> _N: ...
    def parse_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> Any:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._refuse(parsed, extras)
        return parsed

    def error(self, message: str) -> NoReturn:
        if self._subcommands() is None:  # a parent's arguments include its subcommand's options
            unknown = next((t for t in self._options_given() if not self._knows(t)), None)
            if unknown is not None:
                message = self._unrecognized(unknown)
        self.exit(exits.REFUSED, f"{self.prog}: error: {message} (`{self.prog} --help` for usage)\n")

    def _refuse(self, parsed: argparse.Namespace, extras: list[str]) -> NoReturn:
        chosen: LazarusParser = self
        while (sub := chosen._subcommands()) is not None:  # follow the subcommands named, down to the last
            name = getattr(parsed, sub.dest, None)
            if name not in sub.choices:
                break
            chosen = sub.choices[name]
        option = next((e for e in extras if e.startswith("-")), None)
        chosen.error(chosen._unrecognized(option) if option else f"unrecognized arguments: {' '.join(extras)}")

    def _subcommands(self) -> Subcommands | None:
        return next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)

    def _options_given(self) -> list[str]:
        given = list(self._given)
        given = given[: given.index("--")] if "--" in given else given
        return [t for t in given if t.startswith("-") and not self._negative_number_matcher.match(t)]

    def _knows(self, token: str) -> bool:
        name = token.split("=", 1)[0]
        known = self._option_string_actions
        return name in known or (self.allow_abbrev and name.startswith("--") and any(o.startswith(name) for o in known))

    def _unrecognized(self, token: str) -> str:
        name = token.split("=", 1)[0]
        close = difflib.get_close_matches(name, list(self._option_string_actions), n=1)
        return f"unrecognized option {name}" + (f"; did you mean {close[0]}?" if close else "")


def log_level(text: str) -> str:
    """argparse type: a loguru level name, in any case."""
    level = text.upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"log level must be one of {', '.join(LOG_LEVELS)}, got {text!r}")
    return level


# What ``add_subparsers`` returns on a LazarusParser (its subcommands are LazarusParsers too); the
# subcommand modules' ``register`` functions take it.
Subcommands: TypeAlias = "argparse._SubParsersAction[LazarusParser]"
