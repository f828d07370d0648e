"""Streaming log files into an :class:`Analyzer` without reading them whole.

Files are read in 1 MiB blocks of bytes. The keyword prefilter runs over the
whole block at C speed; only the lines around a keyword hit are cut out,
decoded (invalid UTF-8 replaced) and handed to the analyser, and line numbers
come from counting newlines between hits. A line longer than
``MAX_LINE_BYTES`` is read up to that size and the rest skipped, with a note,
so a 50 MB line of binary garbage costs one pass and no memory. A hit line
followed by indented continuation lines (a wrapped kernel or driver message,
the body of a chained error) is handed over as one line, at most
``MAX_CONTINUATION_LINES`` joined; traceback frames and their source lines (``raise``,
``assert``) and lines that open with a record header of their own (NCCL's ``host:pid:tid [dev]``,
libfabric's ``libfabric:pid:time:``) are not continuations. A
long hit line cut in the middle of a word by a terminal or a web page (it ends
in a letter and the next line goes on with a lower-case word fragment, not a
new record such as ``node2: ...``) is joined without a space, so
``collectiv`` + ``e operation timeout`` reads as one message; so is one cut at a word
boundary that kept its trailing space (``collective `` + ``operation timeout``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from lazarus.detection.catalogue import Catalogue
from lazarus.detection.engine import MAX_LINE_CHARS, Analyzer
from lazarus.detection.finished import finished_file_diagnosis
from lazarus.detection.layout import RankLayout
from lazarus.detection.rank_collision import rank_collision_diagnosis
from lazarus.detection.silence import silence_note
from lazarus.detection.slowdown import slowdown_diagnosis
from lazarus.errors import LogReadError
from lazarus.models.diagnosis import Diagnosis, FailureKind

BLOCK_BYTES = 1 << 20
MAX_LINE_BYTES = MAX_LINE_CHARS
MAX_CONTINUATION_LINES = 3
# A traceback's source lines are not continuations either: ``raise X(`` / ``assert ...`` under the exception line
# is the code that raised it (output of several ranks interleaves), never more of the message. Nor is a line
# that opens with a record header of its own, however indented (a pasted log keeps the paste's indent): NCCL's
# ``host:pid:tid [dev] `` and libfabric's ``libfabric:pid:time:`` start a new message.
_CONTINUATION = re.compile(
    rb"(?:  |\t)\s*(?!File \"|at |\^|raise\b|assert\b|[\w.-]+:\d+:\d+ \[-?\d+\] |libfabric:\d+:)\S"
)
HARD_WRAP_MIN_BYTES = 80
# The next line goes on with a lower-case word fragment (``e operation``, ``plete data.``), not a new record
# (``node2: ...``, ``rank3 ...``, ``train.py:12``).
_HARD_WRAP_NEXT = re.compile(rb"[a-z]+[ ,.;)]")
# Cut mid-word (ends in a letter), or at a word boundary that kept its space (``collective `` + ``operation
# timeout``): a record of its own never ends in a letter or comma followed by a space.
_HARD_WRAP_END = re.compile(rb"(?:[A-Za-z]|[A-Za-z,] )$")


def _hard_wrapped(data: bytes, start: int, end: int) -> bool:
    """The line ``data[start:end]`` was cut by a terminal or a web page: long, ends in a letter (mid-word) or in a
    word and the space after it, and the next line goes on in lower case."""
    return (
        end - start >= HARD_WRAP_MIN_BYTES
        and _HARD_WRAP_END.search(data, max(start, end - 2), end) is not None
        and _HARD_WRAP_NEXT.match(data, end + 1) is not None
    )


def _join_continuations(data: bytes, start: int, end: int) -> tuple[int, list[int]]:
    """Extend a hit line over the lines that continue it: indented ones (a wrapped message, a chained
    error's body; traceback frames and carets are not continuations) and one cut mid-word, at most
    ``MAX_CONTINUATION_LINES``. Returns the new end and the newlines that were hard wraps (no space)."""
    wraps: list[int] = []
    line_start = start
    for _ in range(MAX_CONTINUATION_LINES):
        if end >= len(data):
            break
        if _hard_wrapped(data, line_start, end):
            wraps.append(end)
        elif _CONTINUATION.match(data, end + 1) is None:
            break
        line_start = end + 1
        following = data.find(b"\n", end + 1)
        end = len(data) if following < 0 else following
    return end, wraps


class _BlockScanner:
    """Feeds prefiltered lines of one file to an analyser, tracking line numbers."""

    def __init__(self, analyzer: Analyzer, name: str) -> None:
        self.analyzer = analyzer
        self.name = name
        self.pattern = analyzer.prefilter.raw
        self.lines_done = 0  # complete lines before the current block

    def block(self, data: bytes) -> None:
        """Scan complete lines (``data`` ends with a newline, or is the file's last line)."""
        search, position, counted_to, line_no = self.pattern.search, 0, 0, self.lines_done
        while (hit := search(data, position)) is not None:
            start = data.rfind(b"\n", 0, hit.start()) + 1
            end = data.find(b"\n", hit.end())
            end = len(data) if end < 0 else end
            end, wraps = _join_continuations(data, start, end)
            line_no += data.count(b"\n", counted_to, start)
            counted_to = start
            if end - start > MAX_LINE_BYTES:
                self.analyzer.note(
                    f"{self.name}:{line_no + 1}: line longer than {MAX_LINE_BYTES // 1024} KiB; only its start was read"
                )
            raw = data[start : min(end, start + MAX_LINE_BYTES)]
            for wrap in reversed(wraps):  # a hard wrap's newline goes; the others become spaces
                raw = raw[: wrap - start] + raw[wrap - start + 1 :]
            raw = raw.replace(b"\n", b" ")
            self.analyzer.feed_candidate(self.name, line_no + 1, raw.decode("utf-8", "replace"))
            position = end + 1
        lines = data.count(b"\n")
        self.lines_done += lines if data.endswith(b"\n") else lines + 1
        self.analyzer.lines_seen += lines if data.endswith(b"\n") else lines + 1

    def long_line(self, head: bytes) -> None:
        """The first ``MAX_LINE_BYTES`` of a line too long to keep; its rest is skipped by the caller."""
        line_no = self.lines_done + 1
        self.analyzer.note(
            f"{self.name}:{line_no}: line longer than {MAX_LINE_BYTES // 1024} KiB; only its start was read"
        )
        if self.pattern.search(head) is not None:
            self.analyzer.feed_candidate(self.name, line_no, head.decode("utf-8", "replace"))
        self.lines_done += 1
        self.analyzer.lines_seen += 1


def scan_file(path: Path, analyzer: Analyzer, display_name: str | None = None) -> None:
    """Stream one file into ``analyzer``; raises :class:`LogReadError` when it cannot be opened or read."""
    name = display_name or str(path)
    scanner = _BlockScanner(analyzer, name)
    pending, skipping = b"", False
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(BLOCK_BYTES):
                if skipping:
                    cut = chunk.find(b"\n")
                    if cut < 0:
                        continue
                    chunk, skipping = chunk[cut + 1 :], False
                data = pending + chunk
                cut = data.rfind(b"\n")
                if cut >= 0:
                    scanner.block(data[: cut + 1])
                    data = data[cut + 1 :]
                if len(data) > MAX_LINE_BYTES:
                    scanner.long_line(data[:MAX_LINE_BYTES])
                    data, skipping = b"", True
                pending = data
    except IsADirectoryError:
        raise LogReadError(f"cannot read log {name}: it is a directory, not a file") from None
    except OSError as exc:
        raise LogReadError(f"cannot read log {name}: {exc.strerror or exc}") from None
    if pending:
        scanner.block(pending)


def check_readable(path: Path) -> None:
    """Raise :class:`LogReadError` with a clear sentence when ``path`` is not a readable regular file."""
    if not path.exists():
        raise LogReadError(f"cannot read log {path}: no such file")
    if path.is_dir():
        raise LogReadError(f"cannot read log {path}: it is a directory, not a file")
    if not path.is_file():
        # A FIFO or device would block or never end; logs are regular files.
        raise LogReadError(f"cannot read log {path}: not a regular file")
    if not os.access(path, os.R_OK):
        raise LogReadError(f"cannot read log {path}: permission denied")


def diagnose_files(
    paths: Iterable[str | Path],
    layout: RankLayout | None = None,
    known_nodes: list[str] | None = None,
    catalogue: Catalogue | None = None,
) -> Diagnosis:
    """Diagnose one failure from its log files (all files are checked before any is read).

    When no failure is found, a report that carries its own measure answers the finished file
    (:mod:`.finished`: a stall inspector's last word is a hang, a GPU's clocks-event reason a straggler),
    processes that announced the same global ranks while others never appeared are a launch that hangs
    (:mod:`.rank_collision`), a file whose own progress reports end in a lasting slowdown is a straggler of unknown cause
    (:mod:`.slowdown`), and a file that ends in set-up or waiting output gets a note (:mod:`.silence`): a
    finished file cannot show a hang, the live hang watchdog decides.
    """
    files = [Path(p) for p in paths]
    if not files:
        raise LogReadError("no log files given")
    for path in files:
        check_readable(path)
    analyzer = Analyzer(catalogue=catalogue, layout=layout, known_nodes=known_nodes)
    for path in files:
        scan_file(path, analyzer)
    for path in files:
        if path.stat().st_size == 0:
            analyzer.note(f"{path} is empty")
    diagnosis = analyzer.diagnosis()
    if diagnosis.failure_kind is not FailureKind.NONE:
        return diagnosis
    if (answer := finished_file_diagnosis(analyzer, files, diagnosis)) is not None:
        return answer
    if (collided := rank_collision_diagnosis(files, diagnosis)) is not None:
        return collided
    if (slow := slowdown_diagnosis(files, diagnosis)) is not None:
        return slow
    silent = [note for path in files if (note := silence_note(path)) is not None]
    return diagnosis.model_copy(update={"notes": diagnosis.notes + silent}) if silent else diagnosis
