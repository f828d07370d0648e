"""A reader that stops early (`lazarus ... | head -1`) ends the command quietly, as it ends Unix tools.

The real console script runs in a shell pipeline. ``head -1`` takes a line
written before the command starts and exits, so the command's first write meets
a closed pipe, every time: stderr must stay empty and the status is the one a
shell gives a tool ended by SIGPIPE.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

LAZARUS = Path(sys.executable).with_name("lazarus")


def piped_into_head(*argv: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    command = f'{{ echo first; {shlex.quote(str(LAZARUS))} {shlex.join(argv)}; echo "status=$?" >&3; }} | head -1'
    env = {k: v for k, v in os.environ.items() if k != "LAZARUS_CONFIG"}
    env["LAZARUS_DEV__STATE_DIR"] = str(tmp_path / "dev")  # not the shared dev stack's state
    return subprocess.run(
        ["bash", "-c", f"exec 3>&2; {command}"], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path
    )


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "train.out"
    path.write_text(
        "".join(f"[rank{i % 8}] step {i} NCCL WARN Call to connect returned Connection refused\n" for i in range(5000))
    )
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ("dev", "status"),
        ("dev", "status", "--json"),
        ("diagnose", "--json", "{log}"),
        ("diagnose", "{log}"),
    ],
)
def test_a_closed_pipe_ends_the_command_without_a_traceback(tmp_path, log_file, argv):
    proc = piped_into_head(*(a.format(log=log_file) for a in argv), tmp_path=tmp_path)
    assert proc.stdout == "first\n"
    assert proc.stderr == "status=141\n"
