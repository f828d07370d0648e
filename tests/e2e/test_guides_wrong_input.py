"""Every command of the user and operator guides, given a wrong input (unknown job, bad flag, bad value,
the stack down), answers in one sentence on stderr, with no traceback and a non-zero exit status.

Two shapes of answer, both exactly one line: a refusal once the command runs is ``lazarus: <sentence>``; a
refusal by the argument parser (an unknown option, a value of the wrong type) is
``lazarus <subcommand>: error: <sentence> (`lazarus <subcommand> --help` for usage)`` (see lazarus.cli.parser).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.stack import POLICY, REPO, E2EStack

pytestmark = [pytest.mark.slurm, pytest.mark.temporal]

LOG = str(REPO / "README.md")  # any readable file, for `lazarus diagnose`

# (guide command, wrong input): one line, "lazarus: ..." (the words that line must hold)
REFUSED = [
    (("submit", "--policy", "nosuch", "--", "-N2", "train.sh"), "unknown policy 'nosuch'"),
    (("submit", "--policy", POLICY, "--", "-N2", "/nonexistent/train.sh"), ""),
    (("watch", "999999", "--policy", POLICY), "999999"),
    (("watch", "abc", "--policy", POLICY), "job id must be a positive integer, got 'abc'"),
    (("watch", "999999", "--policy", "bogus"), "unknown policy 'bogus'"),
    (("show", "999999"), "job 999999 is not watched by Lazarus"),
    (("show", "999999", "--json"), "job 999999 is not watched by Lazarus"),
    (("advice", "approve", "999999"), "job 999999 is not watched by Lazarus"),
    (("advice", "approve", "999999", "--generation", "1", "--comment", "x"), "job 999999 is not watched by Lazarus"),
    (("advice", "reject", "999999", "--generation", "1"), "job 999999 is not watched by Lazarus"),
    (("mode", "act", "--job", "999999"), "job 999999 is not watched by Lazarus"),
    (("nodes", "drain", "node9", "--reason", "fan noise"), "node9"),
    (("nodes", "resume", "node9", "--comment", "fixed"), "node9"),
    (("nodes", "policy", "--max-drain-fraction", "2"), "max_drain_fraction"),
    (("nodes", "policy", "--reconcile-interval", "soon"), "reconcile_interval"),
    (("diagnose", "/nonexistent/slurm-123.out", "--json"), "/nonexistent/slurm-123.out"),
    (("diagnose", LOG, "--nodes", "node[1-"), "node[1-"),
    (("diagnose", LOG, "--tasks-per-node", "0"), "--tasks-per-node"),
]

# the same commands with the stack down: Temporal does not answer at the configured address
STACK_DOWN = [
    ("jobs",),
    ("jobs", "--state", "awaiting-approval", "--json"),
    ("show", "1234"),
    ("show", "1234", "--json"),
    ("advice", "list"),
    ("advice", "approve", "1234", "--generation", "1"),
    ("advice", "reject", "1234"),
    ("mode", "act", "--job", "1234"),
    ("mode", "monitor"),
    ("mode", "act"),
    ("nodes",),
    ("nodes", "--json"),
    ("nodes", "drain", "node1", "--reason", "fan noise"),
    ("nodes", "resume", "node1"),
    ("nodes", "policy"),
    ("nodes", "policy", "--max-drain-fraction", "0.1"),
    ("watch", "1234", "--policy", "default"),
]

# refused by the parser: one error line naming the subcommand and its --help
MISUSED = [
    ("submit", "--policy"),
    ("submit", "--wait", "forever", "--", "train.sh"),
    ("watch", "1234", "--polcy", "default"),
    ("jobs", "--state", "bogus"),
    ("jobs", "--jsn"),
    ("show",),
    ("show", "abc"),
    ("show", "1234", "--jsn"),
    ("advice",),
    ("advice", "list", "--jsn"),
    ("advice", "approve", "1234", "--generation", "0"),
    ("advice", "approve", "1234", "--generation", "one"),
    ("advice", "approve", "14", "--generaton", "1"),
    ("advice", "reject", "-5"),
    ("mode", "bogus"),
    ("mode", "act", "--job", "abc"),
    ("nodes", "drain", "node1"),
    ("nodes", "drain", "node1;rm", "--reason", "x"),
    ("nodes", "resume"),
    ("nodes", "policy", "--max-drain-fractoin", "0.1"),
    ("diagnose",),
    ("diagnose", LOG, "--tasks-per-node", "many"),
]


def run(config: Path, e2e: E2EStack, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `lazarus` command, as a user in a shell runs it."""
    env = dict(os.environ, LAZARUS_CONFIG=str(config), SLURM_CONF=str(e2e.cluster.slurm_conf))
    return subprocess.run(
        [str(Path(sys.executable).with_name("lazarus")), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )


def assert_one_sentence(proc: subprocess.CompletedProcess[str], words: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lazarus: "), proc.stderr
    assert words in lines[0], lines[0]


@pytest.fixture(scope="module")
def stack_down(e2e: E2EStack, tmp_path_factory) -> Path:
    """The e2e configuration, pointed at a port where no Temporal server listens."""
    config = yaml.safe_load(e2e.config_path.read_text())
    config["temporal"]["address"] = "127.0.0.1:1"
    path = tmp_path_factory.mktemp("down") / "lazarus.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _refused_id(value: object) -> str | None:
    """The command line, with the session's policy name as ``POLICY``: every xdist worker has its own
    session (and pid), and all workers must collect the same test ids."""
    return " ".join(value).replace(POLICY, "POLICY") if isinstance(value, tuple) else None


@pytest.mark.parametrize("args,words", REFUSED, ids=_refused_id)
def test_a_wrong_input_is_refused_in_one_sentence(e2e, args, words):
    assert_one_sentence(run(e2e.config_path, e2e, *args), words)


@pytest.mark.parametrize("args", STACK_DOWN, ids=" ".join)
def test_with_the_stack_down_a_command_says_temporal_cannot_be_reached(e2e, stack_down, args):
    assert_one_sentence(
        run(stack_down, e2e, *args),
        "cannot reach Temporal at 127.0.0.1:1 (namespace default): connection refused. Is the server running?",
    )


def test_a_bad_ledger_policy_value_is_refused_before_anything_connects(e2e, stack_down):
    proc = run(stack_down, e2e, "nodes", "policy", "--max-drain-fraction", "2")
    assert_one_sentence(proc, "max_drain_fraction: Input should be less than or equal to 1")


@pytest.mark.parametrize("args", MISUSED, ids=" ".join)
def test_a_misused_option_gets_one_error_line_naming_the_subcommand(e2e, args):
    proc = run(e2e.config_path, e2e, *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    [error] = proc.stderr.splitlines()
    assert error.startswith(f"lazarus {args[0]}") and ": error: " in error, proc.stderr
    assert error.endswith(" --help` for usage)"), proc.stderr
