"""Spec: docs/cli.md is generated from the `lazarus` parser and is current: every command, its arguments,
its options and its exit statuses; every command that prints data takes --json; --help lists the exit
statuses too."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from lazarus.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from gen_cli_docs import _subcommands, _walk  # noqa: E402  (scripts/ on sys.path)

# the commands that print data (a listing, a status, a report): each has --json
PRINTS_DATA = (
    "lazarus jobs",
    "lazarus show",
    "lazarus advice list",
    "lazarus nodes",
    "lazarus nodes policy",
    "lazarus policies",
    "lazarus spares",
    "lazarus dev up",
    "lazarus dev status",
    "lazarus diagnose",
    "lazarus node-agent",
)


def _commands() -> dict[str, object]:
    found = {}

    def walk(path, parser):
        found[path] = parser
        for name, _, sub in _subcommands(parser):
            walk(f"{path} {name}", sub)

    walk("lazarus", build_parser())
    return found


def test_the_committed_page_matches_the_parser():
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_cli_docs.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_every_command_its_options_and_its_exit_statuses_are_on_the_page():
    page = (REPO / "docs" / "cli.md").read_text()
    for path, parser in _commands().items():
        assert f"\n## {path}\n" in page, path
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in page.split(f"\n## {path}\n")[1].split("\n## ")[0], (path, option)
    assert sum(1 for lines in _walk("lazarus", "", build_parser()) if "| exit status | meaning |" in lines) == len(
        [p for p in _commands().values() if p.get_default("func") is not None]
    )


def test_every_argument_and_option_says_what_it_is_for():
    for path, parser in _commands().items():
        for action in parser._actions:
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                assert action.help, (path, action.option_strings or action.dest)


@pytest.mark.parametrize("path", PRINTS_DATA)
def test_every_command_that_prints_data_takes_json(path):
    parser = _commands()[path]
    assert "--json" in parser._option_string_actions, path


def test_listings_promise_json_lines_and_the_others_one_document():
    commands = _commands()
    for path in PRINTS_DATA:
        text = commands[path]._option_string_actions["--json"].help
        listing = path in ("lazarus jobs", "lazarus advice list", "lazarus policies", "lazarus spares")
        assert text.startswith("print JSON lines: one object per" if listing else "print "), path
        assert text.endswith("as one JSON object") != listing, path


def test_help_lists_the_exit_statuses(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dev", "status", "--help"])
    out = capsys.readouterr().out
    assert "exit status:\n  0   done\n  1   a component of the stack is down" in out
    assert "  141 the reader of the output went away" in out
