"""A pid file is trusted only for a live, non-zombie process that carries the stack's marker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from lazarus.devstack import procs
from lazarus.devstack.layout import MARKER_ENV


def test_pid_file_naming_a_foreign_process_is_ignored_and_the_process_survives(tmp_path: Path) -> None:
    stranger = subprocess.Popen(["sleep", "60"])  # e.g. a reused pid
    pid_file = tmp_path / "slurmctld.pid"
    pid_file.write_text(f"{stranger.pid}\n")
    try:
        assert procs.marked_pid(pid_file, "/var/tmp/some-stack") is None
        assert procs.stop_pid_file(pid_file, "/var/tmp/some-stack") is None
        assert procs.is_alive(stranger.pid)
        assert not pid_file.exists()
    finally:
        stranger.kill()
        stranger.wait()


def test_marked_daemon_is_found_and_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "d.pid"
    env = dict(os.environ, **{MARKER_ENV: str(tmp_path)})
    pid = procs.start_daemon(["sleep", "60"], log_file=tmp_path / "d.log", pid_file=pid_file, env=env)
    assert procs.marked_pid(pid_file, str(tmp_path)) == pid
    assert procs.stop_pid_file(pid_file, str(tmp_path)) == pid
    assert not procs.is_alive(pid)


def test_a_marked_daemon_is_ours_the_instant_it_is_started(tmp_path: Path) -> None:
    # Popen returns once the exec has begun; /proc/PID/environ reads empty for a moment after that (about one
    # start in a hundred on a loaded machine), and the daemon must not pass for a stranger then.
    env = dict(os.environ, **{MARKER_ENV: str(tmp_path)})
    missed = []
    for i in range(100):
        pid_file = tmp_path / f"d{i}.pid"
        pid = procs.start_daemon(["sleep", "60"], log_file=tmp_path / "d.log", pid_file=pid_file, env=env)
        try:
            if procs.marked_pid(pid_file, str(tmp_path)) != pid:
                missed.append(i)
        finally:
            procs.terminate([pid], grace=1)
    assert missed == []


def test_zombie_counts_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    # Not reaped yet: the process table still holds it, as state Z.
    while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        pass
    assert not procs.is_alive(child.pid)
    child.wait()


def test_daemon_output_goes_to_its_log_not_to_the_caller(tmp_path: Path) -> None:
    # A daemon holding the caller's pipe would make capture_output wait for ever.
    code = (
        "from pathlib import Path; import os, sys\n"
        "from lazarus.devstack import procs\n"
        f"procs.start_daemon(['sh', '-c', 'echo hello; sleep 30'], log_file=Path({str(tmp_path / 'x.log')!r}),"
        f" pid_file=Path({str(tmp_path / 'x.pid')!r}), env=dict(os.environ))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0 and proc.stdout == ""
    pid = int((tmp_path / "x.pid").read_text())
    try:
        deadline = time.monotonic() + 5
        while "hello" not in (tmp_path / "x.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "hello" in (tmp_path / "x.log").read_text()
    finally:
        procs.terminate([pid], grace=1)
