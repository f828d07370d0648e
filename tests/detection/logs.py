"""Diagnosing a log the tests write: one file, ``job.log``, with the given text."""

from __future__ import annotations

from pathlib import Path

from lazarus.detection.reader import diagnose_files
from lazarus.models.diagnosis import Diagnosis


def diagnose_text(tmp_path: Path, text: str) -> Diagnosis:
    path = tmp_path / "job.log"
    path.write_text(text)
    return diagnose_files([path])
