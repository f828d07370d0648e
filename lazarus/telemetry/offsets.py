"""Where the telemetry loop is in every job's output files, kept across restarts.

A restarted loop that re-read a file from the start would charge an earlier
attempt's failure lines (the file is appended to across requeues) to the
current attempt. Offsets are therefore saved after each cycle that moved them,
and a requeued job seen with no saved offset (a fresh worker, e.g. a new pod)
is read from the end of its file.
"""

from __future__ import annotations

import os
from pathlib import Path

from loguru import logger

from lazarus.detection.tail import FileTail, TailLine, TailState, read_new_lines


class OffsetStore:
    def __init__(self, state_file: Path | None) -> None:
        self.state_file = state_file
        self.state = TailState()
        self._dirty = False
        self._load()

    def _load(self) -> None:
        if not self.state_file or not self.state_file.exists():
            return
        try:
            self.state = TailState.model_validate_json(self.state_file.read_text())
        except (OSError, ValueError) as exc:
            logger.warning(f"ignoring unreadable telemetry offsets {self.state_file}: {exc}")

    def save(self) -> None:
        if not self.state_file or not self._dirty:
            return
        tmp = self.state_file.with_suffix(".tmp")
        try:
            tmp.write_text(self.state.model_dump_json())
            tmp.replace(self.state_file)
        except (OSError, ValueError) as exc:
            logger.warning(f"cannot save telemetry offsets to {self.state_file}: {exc}")
        self._dirty = False

    def read(self, path: str, max_bytes: int) -> tuple[list[TailLine], list[str]]:
        """New complete lines of ``path`` since the last read (see :func:`read_new_lines`)."""
        lines, new_state, notes = read_new_lines(path, self.state, max_bytes)
        if new_state is not self.state:
            self.state, self._dirty = new_state, True
        return lines, notes

    def skip_to_end(self, paths: list[str], why: str) -> None:
        """Start reading files we hold no offset for at their current end."""
        files = dict(self.state.files)
        for path in paths:
            if path in files:
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue
            files[path] = FileTail(inode=info.st_ino, device=info.st_dev, offset=info.st_size)
            logger.info(f"{why}: reading {path} from its end ({info.st_size} bytes of earlier output skipped)")
        self.state, self._dirty = TailState(files=files), True

    def forget(self, paths: list[str]) -> None:
        files = {p: f for p, f in self.state.files.items() if p not in paths}
        if len(files) != len(self.state.files):
            self.state, self._dirty = TailState(files=files), True
