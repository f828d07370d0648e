r"""Incremental tailing of log files for the telemetry loop.

:func:`read_new_lines` reads what was appended since the last call and returns
complete lines plus a new :class:`TailState` to keep (it is a pydantic model, so
it can travel through Temporal as activity input and output).

A carriage return ends a line too: progress bars (tqdm, Lightning, Hugging Face)
redraw themselves with ``\r`` and print ``\n`` only when the epoch ends, so each
redraw is returned as soon as it is read (and once more, should it still grow
after that, e.g. when it was caught half-written). Line numbers still count
``\n`` only, as an editor does, so every redraw of one bar carries the number of
the line the bar is on; empty ``\r`` segments (``\r\n``, a bar's leading ``\r``)
are not returned.

It never raises for trouble with the file itself; it returns a note instead:

- rotated (the path now names another inode) or truncated (size below the
  saved offset): start again from offset 0 and say so;
- deleted, not a regular file, a symbolic link, unreadable: no lines, the old
  state kept (the file is opened as :mod:`lazarus.detection.safe_open` says);
- a line longer than ``MAX_LINE_BYTES`` (e.g. 50 MB without a newline or
  carriage return): the first ``MAX_LINE_BYTES`` are returned as the line, the
  rest skipped up to the next line end; so the state held per file stays bounded;
- invalid UTF-8: replaced with U+FFFD.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from lazarus.detection.safe_open import LogAccess, LogRefusedError, open_log

MAX_LINE_BYTES = 64 * 1024
DEFAULT_MAX_BYTES = 8 << 20


class TailLine(NamedTuple):
    line_no: int  # 1-based within the current file incarnation
    text: str


class FileTail(BaseModel):
    """Where tailing of one path stands."""

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    inode: int | None = None
    device: int | None = None
    offset: int = Field(0, ge=0, description="bytes consumed, including the partial line")
    line_no: int = Field(0, ge=0, description="lines ended by a newline so far")
    partial: bytes = Field(
        b"",
        description="start of an unfinished last line (at most MAX_LINE_BYTES after a "
        "leading \\r, which marks that the line's earlier \\r segments were returned)",
    )
    skipping: bool = Field(False, description="inside an overlong line whose start was already returned")
    shown: int = Field(0, ge=0, description="bytes of the partial's last \\r segment already returned")


class TailState(BaseModel):
    """Tail positions of all files watched for one job."""

    model_config = ConfigDict(extra="forbid")

    files: dict[str, FileTail] = Field(default_factory=dict)


def _split(cur: FileTail, data: bytes, name: str) -> tuple[list[TailLine], list[str]]:
    """Cut ``data`` (appended bytes) into complete lines, updating ``cur`` in place."""
    lines: list[TailLine] = []
    notes: list[str] = []
    shown, cur.shown = cur.shown, 0

    def emit(segment: bytes, line_no: int) -> None:
        nonlocal shown
        if shown:  # the first segment continues the redraw returned last time: again only if it grew
            unchanged, shown = len(segment) == shown, 0
            if unchanged:
                return
        if len(segment) > MAX_LINE_BYTES:
            notes.append(f"{name}:{line_no}: line longer than {MAX_LINE_BYTES // 1024} KiB cut")
        lines.append(TailLine(line_no, segment[:MAX_LINE_BYTES].decode("utf-8", "replace")))

    def skip_rest(start: bytes) -> None:
        notes.append(f"{name}:{cur.line_no + 1}: line longer than {MAX_LINE_BYTES // 1024} KiB; the rest is skipped")
        lines.append(TailLine(cur.line_no + 1, start[:MAX_LINE_BYTES].decode("utf-8", "replace")))
        cur.partial, cur.skipping = b"", True

    if cur.skipping:
        ends = [cut for cut in (data.find(b"\n"), data.find(b"\r")) if cut >= 0]
        if not ends:
            return lines, notes
        cut, cur.skipping = min(ends), False
        if data[cut] == ord("\n"):
            cur.line_no += 1
            cut += 1
        data = data[cut:]  # a \r stays: the rest of the line follows it
    pieces = (cur.partial + data).split(b"\n")
    for piece in pieces[:-1]:
        cur.line_no += 1
        if b"\r" in piece:
            for segment in piece.split(b"\r"):
                if segment:
                    emit(segment, cur.line_no)
        elif len(piece) <= MAX_LINE_BYTES:  # the common case, kept cheap: no call, no copy
            lines.append(TailLine(cur.line_no, piece.decode("utf-8", "replace")))
        else:
            emit(piece, cur.line_no)
    rest = pieces[-1]
    redraw = rest.rfind(b"\r")
    if redraw < 0:  # an ordinary unfinished line: returned once its newline comes
        if len(rest) > MAX_LINE_BYTES:
            skip_rest(rest)
        else:
            cur.partial = rest
        return lines, notes
    for segment in rest[:redraw].split(b"\r"):
        if segment:
            emit(segment, cur.line_no + 1)
    current = rest[redraw + 1 :]  # the bar as drawn now: returned at once, kept to see whether it grows
    if len(current) > MAX_LINE_BYTES:
        skip_rest(current)
        return lines, notes
    if current:
        emit(current, cur.line_no + 1)
        cur.shown = len(current)
    cur.partial = rest[redraw:]
    return lines, notes


def _restart_reason(prev: FileTail, info: os.stat_result) -> str | None:
    if prev.inode is None:
        return None
    if (info.st_ino, info.st_dev) != (prev.inode, prev.device):
        return "was rotated (new file at the same path); reading it from the start"
    if info.st_size < prev.offset:
        return "was truncated; reading it from the start"
    return None


def read_new_lines(
    path: str | Path, state: TailState, max_bytes: int = DEFAULT_MAX_BYTES, fd: int | None = None
) -> tuple[list[TailLine], TailState, list[str]]:
    """Lines appended to ``path`` since ``state``; returns (lines, new state, notes). Never raises for file trouble.

    ``fd``: the file already opened by the caller with :func:`~lazarus.detection.safe_open.open_log` (and
    closed by it); without one, the file is opened here the same way, with no root or owner restriction.
    """
    key = str(path)
    if fd is not None:
        return _read_open(key, fd, state, max_bytes)
    try:
        own = open_log(key, LogAccess())
    except FileNotFoundError:
        return [], state, [f"{key} does not exist (deleted, or not created yet)"]
    except LogRefusedError as exc:
        return [], state, [str(exc)]
    except OSError as exc:
        return [], state, [f"{key} cannot be examined: {exc.strerror or exc}"]
    try:
        return _read_open(key, own, state, max_bytes)
    finally:
        os.close(own)


def _read_open(key: str, fd: int, state: TailState, max_bytes: int) -> tuple[list[TailLine], TailState, list[str]]:
    prev = state.files.get(key, FileTail())
    try:
        info = os.fstat(fd)
    except OSError as exc:
        return [], state, [f"{key} cannot be examined: {exc.strerror or exc}"]
    if not stat.S_ISREG(info.st_mode):
        return [], state, [f"{key} is not a regular file"]
    notes: list[str] = []
    cur = prev.model_copy()
    if reason := _restart_reason(prev, info):
        notes.append(f"{key} {reason}")
        cur = FileTail()
    cur.inode, cur.device = info.st_ino, info.st_dev
    lines: list[TailLine] = []
    if info.st_size > cur.offset:
        try:
            data = os.pread(fd, min(max_bytes, info.st_size - cur.offset), cur.offset)
        except OSError as exc:
            return [], state, [*notes, f"{key} cannot be read: {exc.strerror or exc}"]
        cur.offset += len(data)
        lines, split_notes = _split(cur, data, key)
        notes += split_notes
    files = dict(state.files)
    files[key] = cur
    return lines, TailState(files=files), notes
