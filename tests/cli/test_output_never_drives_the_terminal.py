"""Whatever a job wrote reaches the operator's terminal as text: escapes, carriage returns and NULs in a log
line, a comment or a file name are printed as their escapes, by every command (its output goes through
``lazarus.cli.terminal``). A workflow id given where a job id belongs is refused with the cluster it names.

tests/e2e/test_hostile_input.py shows the same for `lazarus show` and `lazarus jobs` on the real stack.
"""

from __future__ import annotations

import pytest

from lazarus.cli.main import main
from lazarus.cli.terminal import terminal_safe


def test_characters_a_terminal_acts_on_are_written_as_escapes():
    assert terminal_safe("\x1b]0;owned\x07\x1b[2J \x00 \r \u202e \x85 \x7f") == (
        "\\x1b]0;owned\\x07\\x1b[2J \\x00 \\r \\u202e \\x85 \\x7f"
    )


def test_newlines_tabs_and_ordinary_text_are_kept():
    text = "job 26 on east:\tstopped\n  reason: café ✓ \ufffd\n"
    assert terminal_safe(text) == text


def test_a_log_line_with_escapes_is_printed_as_text(tmp_path, capsys):
    log = tmp_path / "train.out"
    log.write_bytes(b"\x1b[31mtorch.OutOfMemoryError: CUDA out of memory.\x1b]0;owned\x07\x00\xff\n")
    assert main(["diagnose", str(log)]) == 0
    out = capsys.readouterr().out
    assert "\\x1b[31mtorch.OutOfMemoryError" in out and "\\x07\\x00" in out
    assert all(line.isprintable() for line in out.split("\n"))


def test_a_workflow_id_where_a_job_id_belongs_is_refused_with_the_cluster_it_names(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["advice", "approve", "lazarus-west-26"])
    assert exit_.value.code == 2
    assert "'lazarus-west-26' is a workflow id: it names job 26 of cluster 'west'" in capsys.readouterr().err
