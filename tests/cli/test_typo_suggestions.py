"""A mistyped option is refused by the subcommand it was given to, in one line that names the closest option
it has and where its usage is."""

from __future__ import annotations

import pytest

from lazarus.cli.main import main


@pytest.mark.parametrize(
    ("argv", "usage", "sentence"),
    [
        (
            ("advice", "approve", "14", "--generaton", "1"),
            "lazarus advice approve",
            "unrecognized option --generaton; did you mean --generation?",
        ),
        (("show", "14", "--jsn"), "lazarus show", "unrecognized option --jsn; did you mean --json?"),
        (("show", "--jsn", "14"), "lazarus show", "unrecognized option --jsn; did you mean --json?"),
        (("jobs", "--sate=watching"), "lazarus jobs", "unrecognized option --sate; did you mean --state?"),
        (("nodes", "--jsno"), "lazarus nodes", "unrecognized option --jsno; did you mean --json?"),
        (
            ("nodes", "drain", "node1", "--reson", "fan"),
            "lazarus nodes drain",
            "unrecognized option --reson; did you mean --reason?",
        ),
        (("dev", "status", "--jason"), "lazarus dev status", "unrecognized option --jason; did you mean --json?"),
        (("show", "14", "--zzzzzz"), "lazarus show", "unrecognized option --zzzzzz"),
        (("show", "14", "15"), "lazarus show", "unrecognized arguments: 15"),
    ],
)
def test_the_subcommand_answers_in_one_line_with_the_closest_option(capsys, argv, usage, sentence):
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err == f"{usage}: error: {sentence} (`{usage} --help` for usage)\n"
