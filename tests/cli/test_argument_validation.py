"""Wrong arguments are refused while parsing: one line naming the subcommand, one sentence, exit 2, no traceback.

Nothing here needs Temporal or Slurm: a refused argument never gets as far as
connecting to them.
"""

from __future__ import annotations

import pytest

from lazarus.cli.main import main


def refused(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("argv", "usage", "sentence"),
    [
        (
            ("advice", "approve", "26", "--generation", "0"),
            "lazarus advice approve",
            "argument --generation: advice generations start at 1, got 0",
        ),
        (
            ("advice", "reject", "26", "--generation", "two"),
            "lazarus advice reject",
            "argument --generation: an advice generation is a whole number, got 'two'",
        ),
        (
            ("advice", "approve", "26", "--operator", "  "),
            "lazarus advice approve",
            "argument --operator: operator must not be empty",
        ),
        (
            ("advice", "approve", "job26"),
            "lazarus advice approve",
            "argument job_id: job id must be a positive integer, got 'job26'",
        ),
        (
            ("mode", "act", "--job", "0"),
            "lazarus mode",
            "argument --job: job id must be between 1 and 4294967295, got 0",
        ),
        (("show", "-3"), "lazarus show", "argument job_id: job id must be a positive integer, got '-3'"),
        (
            ("nodes", "drain", "node[1-3]", "--reason", "fan"),
            "lazarus nodes drain",
            "argument node: 'node[1-3]' names 3 nodes; give one node at a time",
        ),
        (
            ("nodes", "drain", "node1;reboot", "--reason", "fan"),
            "lazarus nodes drain",
            "argument node: node list 'node1;reboot' is not a valid Slurm hostlist",
        ),
        (
            ("nodes", "drain", "node1", "--reason", ""),
            "lazarus nodes drain",
            "argument --reason: reason must not be empty",
        ),
        (
            ("nodes", "drain", "node1", "--reason", "x" * 121),
            "lazarus nodes drain",
            "argument --reason: reason must be at most 120 characters, got 121",
        ),
        (("nodes", "resume", "no de"), "lazarus nodes resume", "argument node: node list 'no de' is not a valid"),
        (("--log-level", "loud", "jobs"), "lazarus", "argument --log-level: log level must be one of TRACE"),
    ],
)
def test_a_wrong_argument_is_one_sentence_naming_the_subcommand(capsys, argv, usage, sentence):
    err = refused(capsys, *argv)
    assert err.startswith(f"{usage}: error: {sentence}")
    assert err.endswith(f" (`{usage} --help` for usage)\n") and err.count("\n") == 1


def test_a_log_level_is_accepted_in_any_case():
    from lazarus.cli.main import build_parser

    assert build_parser().parse_args(["--log-level", "debug", "jobs"]).log_level == "DEBUG"


def test_valid_arguments_arrive_typed():
    from lazarus.cli.main import build_parser

    args = build_parser().parse_args(["advice", "approve", "26", "--generation", "2", "--operator", " ana "])
    assert (args.job_id, args.generation, args.operator) == (26, 2, "ana")
    assert build_parser().parse_args(["nodes", "drain", "node[4]", "--reason", "fan"]).node == "node4"
