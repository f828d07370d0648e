"""Detached daemons: start, liveness, stop by pid file, and cleanup of job leftovers.

Failure stories this module exists for (all seen on the target machine):

* A daemon that inherits the caller's stdout/stderr keeps a ``capture_output``
  pipe open for ever, so every daemon writes to its own log file instead.
* A process read the instant it was started may show its new name but an
  empty ``/proc/PID/environ`` (the exec is not finished), so a marked daemon
  would pass for a stranger: the marker check waits for the environment.
* Orphans are reparented to a PID 1 that reaps slowly, and ``kill -0`` succeeds
  on a zombie: liveness reads the state letter in ``/proc/PID/stat``.
* When slurmd or slurmctld die before their jobs, ``slurmstepd`` and the job
  processes survive, ignore SIGTERM and keep GPUs "busy". They are found by
  ``comm == slurmstepd`` plus ``SLURM_CONF=<our conf>`` in their environment,
  never by name alone, so another cluster on the same host is left alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from loguru import logger

from lazarus.devstack.layout import MARKER_ENV

EXEC_SETTLE = 1.0
"""Seconds to wait for a just-started process whose environment still reads empty (see :func:`marked_pid`)."""


def is_alive(pid: int) -> bool:
    """True when ``pid`` exists and is neither a zombie nor dead."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    # The command name is in parentheses and may itself contain spaces or ')'.
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X", "x")


def read_environ(pid: int) -> dict[str, str]:
    """The environment ``pid`` was started with, or {} when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def read_comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def marked_pid(pid_file: Path, marker: str) -> int | None:
    """The live pid recorded in ``pid_file`` if that process carries our marker.

    A stale pid file (process gone, or the pid reused by a process that is not
    ours) yields None, so callers neither trust nor signal it.
    """
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    if not is_alive(pid):
        return None
    env = read_environ(pid)
    deadline = time.monotonic() + EXEC_SETTLE
    while not env and is_alive(pid) and time.monotonic() < deadline:
        # caught mid-exec: the kernel names the new program (and closes the pipe that lets Popen return)
        # before it points /proc/PID/environ at the new environment, which reads empty until then
        time.sleep(0.01)
        env = read_environ(pid)
    if env.get(MARKER_ENV) != marker:
        return None
    return pid


def start_daemon(
    argv: list[str],
    *,
    log_file: Path,
    pid_file: Path,
    env: Mapping[str, str],
    user: str | None = None,
    cwd: Path | None = None,
) -> int:
    """Start ``argv`` in its own session, output appended to ``log_file``; return its pid.

    The program must stay in the foreground (``-D``/``-F``): the pid we record
    is the pid we started, so stop and liveness never depend on the daemon's
    own pid file.
    """
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "ab") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            user=user,
            group=user,
            start_new_session=True,
            close_fds=True,
        )
    pid_file.write_text(f"{proc.pid}\n")
    logger.debug("started {} as pid {}", argv[0], proc.pid)
    return proc.pid


def wait_dead(pids: Iterable[int], timeout: float) -> list[int]:
    """Wait until every pid is dead or ``timeout`` passes; return the survivors."""
    pending = list(pids)
    deadline = time.monotonic() + timeout
    while pending:
        pending = [p for p in pending if is_alive(p)]
        if not pending or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    return pending


def terminate(pids: Iterable[int], grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL whatever is still alive after ``grace`` seconds."""
    pids = [p for p in pids if is_alive(p)]
    signal_pids(pids, signal.SIGTERM)
    survivors = wait_dead(pids, grace)
    if survivors:
        logger.debug("SIGKILL to {} after {} s", survivors, grace)
        signal_pids(survivors, signal.SIGKILL)
        wait_dead(survivors, 5.0)


def stop_pid_file(pid_file: Path, marker: str, grace: float = 5.0) -> int | None:
    """Stop the marked process named by ``pid_file`` and remove the file; return its pid."""
    pid = marked_pid(pid_file, marker)
    if pid is not None:
        terminate([pid], grace)
    pid_file.unlink(missing_ok=True)
    return pid


def slurm_leftovers(slurm_conf: Path) -> list[int]:
    """slurmstepd processes of the cluster configured by ``slurm_conf``, and their descendants."""
    want = str(slurm_conf)
    steps = [
        pid for pid in all_pids() if read_comm(pid) == "slurmstepd" and read_environ(pid).get("SLURM_CONF") == want
    ]
    return sorted(_with_descendants(steps))


def all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _with_descendants(roots: Iterable[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(children.get(pid, []))
    return found


def signal_pids(pids: Iterable[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
