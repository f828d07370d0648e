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
from lazarus.errors import DevStackError, shorten

# A daemon that is not ready after this long is broken, not slow: every
# component came up in under 3 s on a 2-core machine.
DEFAULT_READY_TIMEOUT = 60.0
# Attempts to start a daemon whose port was briefly taken (see Component._start).
BIND_RETRIES = 4
# A daemon that cannot bind its port exits within this time (slurmd: ~0.1 s).
BIND_FAILURE_WINDOW_S = 1.0


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
        pid = self.pid(layout)
        started = pid is None
        if started:
            pid = self._start(layout)
        self._wait_ready(layout, pid)
        if self.after_ready:
            self.after_ready()
        return started

    def _start(self, layout: Layout) -> int:
        """Start the daemon and wait until it is up or has failed, retrying a stolen port.

        Our test ports lie inside Linux's ephemeral range (32768-60999), so a
        short-lived outgoing connection of any program can hold one for a
        moment and the daemon dies with "Address already in use". That is
        retried a few times; a port held by a listener is reported at once.
        """
        if self.port is not None and port_open(self.port):
            raise DevStackError(
                f"{self.name} cannot start: port {self.port} on 127.0.0.1 is used by another program; "
                "stop it or choose other ports in the dev section of the configuration"
            )
        if self.prepare:
            self.prepare()
        log_file = layout.log_file(self.name)
        for attempt in range(1, BIND_RETRIES + 1):
            offset = log_file.stat().st_size if log_file.exists() else 0
            pid = procs.start_daemon(
                self.argv,
                log_file=log_file,
                pid_file=layout.pid_file(self.name),
                env=self.env,
                user=self.user,
                cwd=layout.root,
            )
            if not self._died_of_busy_port(pid, log_file, offset) or attempt == BIND_RETRIES:
                return pid
            time.sleep(1.0)
        return pid

    def _died_of_busy_port(self, pid: int, log_file: Path, offset: int) -> bool:
        if self.port is None:
            return False
        deadline = time.monotonic() + BIND_FAILURE_WINDOW_S
        while time.monotonic() < deadline:
            if not procs.is_alive(pid):
                with open(log_file, "rb") as f:
                    f.seek(offset)
                    return b"Address already in use" in f.read()
            if self.ready():
                return False
            time.sleep(0.05)
        return False

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
                raise DevStackError(f"{self.name} exited during start-up; {log_excerpt(layout.log_file(self.name))}")
            if time.monotonic() > deadline:
                raise DevStackError(
                    f"{self.name} is running but not ready after {self.ready_timeout:.0f} s; "
                    f"{log_excerpt(layout.log_file(self.name))}"
                )
            time.sleep(0.1)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=0.5) as conn:
            # A connect to an unused port in the ephemeral range can pick that
            # very port as its local end and "succeed" by talking to itself.
            local_port: int = conn.getsockname()[1]
            return local_port != port
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


def log_excerpt(log_file: Path) -> str:
    """Where a component's log is and its last line, for error messages that explain themselves in one line
    (the CLI's errors are one line: docs/cli.md)."""
    try:
        tail = [line.strip() for line in log_file.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return f"no log at {log_file}"
    if not tail:
        return f"its log {log_file} is empty"
    return f"its log {log_file} ends with: {shorten(tail[-1], 300)}"
