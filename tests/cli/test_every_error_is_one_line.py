"""Every error the `lazarus` command can meet is one line on stderr and a non-zero status, never a traceback
and never a page of help: a missing command, a bad configuration (however many problems it has), Temporal
not answering, a wrong use of an option, a file that cannot be read, a machine without NVML, an interrupt,
and even a fault of Lazarus itself (its traceback goes to the log, at DEBUG level).

Nothing here needs a running Temporal or Slurm: Temporal is configured at a port where nothing listens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lazarus.cli import diagnose
from lazarus.cli.main import main
from lazarus.errors import LazarusError

README = str(Path(__file__).resolve().parents[2] / "README.md")

# commands that need Temporal, with Temporal down
NEED_TEMPORAL = [
    ("jobs",),
    ("jobs", "--json"),
    ("show", "1234"),
    ("show", "1234", "--json"),
    ("advice", "list", "--json"),
    ("advice", "approve", "1234", "--generation", "1"),
    ("advice", "reject", "1234"),
    ("mode", "act"),
    ("mode", "monitor", "--job", "1234"),
    ("nodes", "--json"),
    ("nodes", "drain", "node1", "--reason", "fan"),
    ("nodes", "resume", "node1"),
    ("nodes", "policy"),
    ("watch", "1234"),
]


def answer(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """The status and stderr of `lazarus ARGV`; stderr must be one line without a traceback."""
    try:
        status = main(list(argv))
    except SystemExit as exc:  # argparse's refusals (run() turns them into the status)
        status = int(exc.code or 0)
    err = capsys.readouterr().err
    assert status != 0
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    return status, err.rstrip("\n")


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write a configuration file; Temporal is at a port where nothing listens."""
    monkeypatch.delenv("LAZARUS_CONFIG", raising=False)

    def write(text: str = 'cluster: t\ntemporal:\n  address: "127.0.0.1:1"\n') -> str:
        path = tmp_path / "lazarus.yaml"
        path.write_text(text)
        return str(path)

    return write


def test_no_command_is_one_line_pointing_at_help(capsys):
    assert answer(capsys) == (2, "lazarus: give a command (`lazarus --help` lists them)")


def test_a_subcommand_without_its_action_is_one_line(capsys):
    assert answer(capsys, "advice") == (
        2,
        "lazarus advice: error: the following arguments are required: ACTION (`lazarus advice --help` for usage)",
    )


def test_a_configuration_with_several_problems_is_one_line(capsys, config):
    path = config("temporl: {}\nmode: yolo\n")
    status, err = answer(capsys, "--config", path, "jobs")
    assert status == 2
    assert err.startswith(f"lazarus: invalid configuration (file {path} and LAZARUS_* environment): ")
    assert "mode: Input should be 'monitor' or 'act'; " in err and "temporl: unknown field" in err


@pytest.mark.parametrize(
    ("text", "words"),
    [(None, "does not exist"), ("cluster: [\n", "is not valid YAML")],
    ids=["missing", "malformed"],
)
def test_a_configuration_that_cannot_be_read_is_one_line(capsys, config, tmp_path, text, words):
    path = config(text) if text else str(tmp_path / "nope.yaml")
    status, err = answer(capsys, "--config", path, "nodes")
    assert status == 2 and words in err


@pytest.mark.parametrize("argv", NEED_TEMPORAL, ids=" ".join)
def test_temporal_not_answering_is_one_line(capsys, config, argv):
    status, err = answer(capsys, "--config", config(), *argv)
    assert status == 2
    assert err.startswith("lazarus: cannot reach Temporal at 127.0.0.1:1 (namespace default): ")


@pytest.mark.parametrize(
    ("argv", "status", "words"),
    [
        (("diagnose", "/nonexistent/slurm-1.out"), 2, "/nonexistent/slurm-1.out"),
        (("diagnose", "/"), 2, "it is a directory, not a file"),
        (("diagnose", README, "--tasks-per-node", "0"), 2, "--tasks-per-node must be at least 1"),
        (("diagnose", README, "--nodes", "node[1-"), 2, "node[1-"),
        (("node-agent", "--json"), 2, "--json needs --once"),
        (("node-agent", "--interval", "0"), 2, "--interval must be positive"),
        (("node-agent", "--once", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"), 3, "NVML not available"),
        (("jobs", "--state", "bogus"), 2, "argument --state: invalid choice: 'bogus'"),
        (("submit", "--wait", "forever"), 2, "--wait takes seconds, got 'forever'"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else None,
)
def test_a_wrong_input_without_a_stack_is_one_line(capsys, config, argv, status, words):
    got, err = answer(capsys, "--config", config(), *argv)
    assert got == status and words in err, err


def test_an_error_message_spanning_lines_is_printed_as_one(capsys, config, monkeypatch):
    def fails(_args):
        raise LazarusError("first problem\n  second problem\n")

    monkeypatch.setattr(diagnose, "run", fails)
    assert answer(capsys, "--config", config(), "diagnose", README) == (
        2,
        "lazarus: first problem; second problem",
    )


def test_a_fault_of_lazarus_itself_is_one_line_and_its_traceback_goes_to_the_log(capsys, config, monkeypatch):
    def breaks(_args):
        return {}["missing"]

    monkeypatch.setattr(diagnose, "run", breaks)
    assert answer(capsys, "--config", config(), "diagnose", README) == (
        2,
        "lazarus: unexpected error (KeyError: 'missing'); `--log-level DEBUG` shows where it happened",
    )
    try:
        main(["--log-level", "DEBUG", "--config", config(), "diagnose", README])
    finally:
        err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError" in err  # asked for, the log has it


def test_an_interrupt_is_one_line_and_status_130(capsys, config, monkeypatch):
    def interrupted(_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(diagnose, "run", interrupted)
    assert answer(capsys, "--config", config(), "diagnose", README) == (130, "lazarus: interrupted")
