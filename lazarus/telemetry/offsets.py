"""Where the telemetry loop is in every job's output files, kept across restarts.

A restarted loop that re-read a file from the start would charge an earlier
attempt's failure lines (the file is appended to across requeues) to the
current attempt. The loop's offsets start from those its lease term was
handed (:mod:`lazarus.telemetry.handover`), and a requeued job seen with no
saved offset is read from the end of its file.

Files are opened as :mod:`lazarus.detection.safe_open` says (no links, regular
files of the job's user, inside the allowed roots). :func:`read_log` and
:func:`end_tails` touch only the file system and return what to keep, so the
loop can run them in a thread and drop the result of one that took too long
(:meth:`OffsetStore.commit` and :meth:`OffsetStore.start_at` then keep it).
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

from loguru import logger

from lazarus.detection.safe_open import LogAccess, LogRefusedError, open_log
from lazarus.detection.tail import FileTail, TailLine, TailState, read_new_lines


class LogRead(NamedTuple):
    """What one read of one file gave: new lines, notes about the file, and why it was refused (if it was)."""

    lines: list[TailLine]
    notes: list[str]
    refused: str | None = None


def read_log(path: str, prev: FileTail | None, max_bytes: int, access: LogAccess) -> tuple[LogRead, FileTail | None]:
    """Read ``path`` from ``prev``; returns the read and the position to keep (None: keep ``prev``)."""
    try:
        fd = open_log(path, access)
    except LogRefusedError as exc:
        return LogRead([], [], str(exc)), None
    except FileNotFoundError:
        return LogRead([], [f"{path} does not exist (deleted, or not created yet)"]), None
    except OSError as exc:
        return LogRead([], [f"{path} cannot be opened: {exc.strerror or exc}"]), None
    try:
        before = TailState(files={path: prev} if prev else {})
        lines, after, notes = read_new_lines(path, before, max_bytes, fd=fd)
    finally:
        os.close(fd)
    return LogRead(lines, notes), after.files.get(path)


def unchanged(path: str, prev: FileTail) -> bool:
    """``path`` is still the regular file ``prev`` read, and has not grown since: nothing to read (one ``lstat``;
    anything else, a link or a replaced file included, is left to :func:`read_log` and its checks)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    same = stat.S_ISREG(info.st_mode) and (info.st_ino, info.st_dev) == (prev.inode, prev.device)
    return same and info.st_size == prev.offset


def read_if_grown(
    path: str, prev: FileTail, max_bytes: int, access: LogAccess
) -> tuple[LogRead, FileTail | None] | None:
    """:func:`read_log` of ``path`` if it grew (or changed) since ``prev``; None when it did not."""
    return None if unchanged(path, prev) else read_log(path, prev, max_bytes, access)


def end_tails(paths: list[str], access: LogAccess) -> dict[str, FileTail]:
    """Positions at the current end of each file that can be opened (see :meth:`OffsetStore.start_at`)."""
    tails = {}
    for path in paths:
        try:
            fd = open_log(path, access)
        except (LogRefusedError, OSError):
            continue
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        tails[path] = FileTail(inode=info.st_ino, device=info.st_dev, offset=info.st_size)
    return tails


class OffsetStore:
    """The loop's position in every watched file (in memory; saved through the lease, see the module doc)."""

    def __init__(self, state: TailState | None = None) -> None:
        self.state = state or TailState()

    def read(self, path: str, max_bytes: int, access: LogAccess | None = None) -> LogRead:
        """New complete lines of ``path`` since the last read (see :func:`read_log`), kept at once."""
        result, tail = read_log(path, self.state.files.get(path), max_bytes, access or LogAccess())
        self.commit(path, tail)
        return result

    def commit(self, path: str, tail: FileTail | None) -> None:
        """Keep ``path``'s new position (None: unchanged), in place: one entry, whatever the number of files."""
        if tail is not None and tail != self.state.files.get(path):
            self.state.files[path] = tail

    def skip_to_end(self, paths: list[str], why: str, access: LogAccess | None = None) -> None:
        """Start reading files we hold no offset for at their current end."""
        self.start_at(end_tails([p for p in paths if p not in self.state.files], access or LogAccess()), why)

    def start_at(self, tails: dict[str, FileTail], why: str) -> None:
        """Keep the end positions from :func:`end_tails` for files we still hold no offset for."""
        files = self.state.files
        for path, tail in tails.items():
            if path in files:
                continue
            files[path] = tail
            logger.info(f"{why}: reading {path} from its end ({tail.offset} bytes of earlier output skipped)")

    def forget(self, paths: list[str]) -> None:
        for path in paths:
            self.state.files.pop(path, None)
