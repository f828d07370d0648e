"""One daemon of the stack: how to prepare, start, recognise and wait for it.

A component is *up* when the process named by its pid file is alive and
carries the stack's marker; it is *ready* when it answers (a port, a socket,
a command). ``ensure`` starts only what is not up, which makes ``dev up``
idempotent, and waits for readiness either way, so a second ``up`` right after
a first one that was interrupted still returns a usable stack.
"""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lazarus.devstack import procs
from lazarus.devstack.layout import MARKER_ENV, Layout
from lazarus.errors import DevStackError

# A daemon that is not ready after this long is broken, not slow: every
# component came up in under 3 s on a 2-core machine.
DEFAULT_READY_TIMEOUT = 60.0


@dataclass
class Component:
    name: str
    argv: list[str]
    env: dict[str, str]
    port: int | None = None
    user: str | None = None
    ready: Callable[[], bool] = lambda: True
    prepare: Callable[[], None] | None = None
    after_ready: Callable[[], None] | None = None
    ready_timeout: float = DEFAULT_READY_TIMEOUT
    stop_grace: float = 5.0

    def pid(self, layout: Layout) -> int | None:
        return procs.marked_pid(layout.pid_file(self.name), self.env[MARKER_ENV])

    def ensure(self, layout: Layout) -> bool:
        """Start the component unless it is up, then wait until ready; True if started."""
        started = False
        if self.pid(layout) is None:
            if self.port is not None and port_open(self.port):
                # Without this check the daemon would die with a bind error
                # buried in its log; say what is wrong instead.
                raise DevStackError(
                    f"{self.name} cannot start: port {self.port} on 127.0.0.1 is used by another program; "
                    "stop it or choose other ports in the dev section of the configuration"
                )
            if self.prepare:
                self.prepare()
            pid = procs.start_daemon(
                self.argv,
                log_file=layout.log_file(self.name),
                pid_file=layout.pid_file(self.name),
                env=self.env,
                user=self.user,
                cwd=layout.root,
            )
            started = True
        else:
            pid = self.pid(layout)
        self._wait_ready(layout, pid)
        if self.after_ready:
            self.after_ready()
        return started

    def stop(self, layout: Layout) -> int | None:
        """Stop the component if up; return the pid that was stopped."""
        return procs.stop_pid_file(layout.pid_file(self.name), self.env[MARKER_ENV], self.stop_grace)

    def signal_stop(self, layout: Layout) -> None:
        """Send SIGTERM without waiting, so slow components exit in parallel."""
        pid = self.pid(layout)
        if pid is not None:
            procs.signal_pids([pid], signal.SIGTERM)

    def _wait_ready(self, layout: Layout, pid: int | None) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while not self.ready():
            if pid is None or not procs.is_alive(pid):
                raise DevStackError(
                    f"{self.name} exited during start-up; {log_excerpt(layout.log_file(self.name))}"
                )
            if time.monotonic() > deadline:
                raise DevStackError(
                    f"{self.name} is running but not ready after {self.ready_timeout:.0f} s; "
                    f"{log_excerpt(layout.log_file(self.name))}"
                )
            time.sleep(0.1)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def unix_socket_open(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            s.connect(str(path))
            return True
    except OSError:
        return False


def log_excerpt(log_file: Path, lines: int = 8) -> str:
    """The last lines of a component's log, for error messages that explain themselves."""
    try:
        tail = log_file.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"no log at {log_file}"
    if not tail:
        return f"its log {log_file} is empty"
    return f"last lines of {log_file}:\n  " + "\n  ".join(tail)
