"""A progress line for the CLI's long waits: on a terminal only, on stderr, erased when the wait ends.

    with waiting(f"waiting for Lazarus to pick up job {job_id}", quiet=args.json):
        ...  # blocking or awaited work

While the block runs, stderr shows ``<what>... 3 s`` (the seconds waited so far), redrawn in place
about twice a second by a daemon thread, so it works around blocking calls and awaited ones alike.
It appears only after a short delay (a quick answer draws nothing) and the line is erased when
the block ends, whatever way it ends, so that what the command prints next starts on a clean line.
It is silent when stderr is not a terminal (a pipe, a file, a CI log) and when ``quiet`` is set
(``--json``): nothing that reads the command's output ever sees it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from lazarus.cli.terminal import terminal_safe

# the line appears only for waits longer than this, and is redrawn this often
DELAY_S = 0.3
INTERVAL_S = 0.5
ERASE = "\r\x1b[K"  # back to the start of the line, clear it
_WIDTH = 100


class Waiting:
    """The progress line of one wait; :meth:`say` changes what it says while it runs."""

    def __init__(self, what: str, stream: TextIO) -> None:
        self._what = what
        self._stream = stream
        self._delay_s, self._interval_s = DELAY_S, INTERVAL_S
        self._started = time.monotonic()
        self._done = threading.Event()
        self._drawn = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="lazarus-progress", daemon=True)

    def say(self, what: str) -> None:
        """What the wait is for, from now on (for example, with a count)."""
        self._what = what

    def line(self) -> str:
        """The line as drawn now: what is awaited and the seconds waited so far."""
        text = f"{terminal_safe(self._what)}... {time.monotonic() - self._started:.0f} s"
        return text if len(text) <= _WIDTH else f"{text[: _WIDTH - 3]}..."

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        with self._lock:
            if self._drawn:
                self._stream.write(ERASE)
                self._stream.flush()

    def _run(self) -> None:
        if self._done.wait(self._delay_s):
            return
        while True:
            with self._lock:
                self._stream.write(f"{ERASE}{self.line()}")
                self._stream.flush()
                self._drawn = True
            if self._done.wait(self._interval_s):
                return


class _Silent:
    """A wait nobody is shown."""

    def say(self, what: str) -> None:
        pass


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


@contextmanager
def waiting(what: str, quiet: bool = False, stream: TextIO | None = None) -> Iterator[Waiting | _Silent]:
    """Show ``what`` as a progress line on ``stream`` (stderr) while the block runs, if it is a terminal."""
    out = stream if stream is not None else sys.stderr
    if quiet or not _is_terminal(out):
        yield _Silent()
        return
    progress = Waiting(what, out)
    progress.start()
    try:
        yield progress
    finally:
        progress.stop()
