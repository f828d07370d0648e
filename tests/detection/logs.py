"""Diagnosing a log the tests write: one file, ``job.log``, with the given text."""

from __future__ import annotations

from pathlib import Path

from lazarus.detection.reader import diagnose_files
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice


def diagnose_text(tmp_path: Path, text: str) -> Diagnosis:
    path = tmp_path / "job.log"
    path.write_text(text)
    return diagnose_files([path])


Answer = tuple[str | None, FailureKind, Category, RetryAdvice | None]


def answer_of(result: Diagnosis) -> Answer:
    """What a rule decides: the deciding signature, the failure kind, the category and the retry advice."""
    return result.signature, result.failure_kind, result.category, result.retry_advice


def answer(tmp_path: Path, text: str) -> Answer:
    return answer_of(diagnose_text(tmp_path, text))


def kind_of(tmp_path: Path, text: str) -> FailureKind:
    """The failure kind of a log holding ``text`` (a line or several; a final newline is added if missing)."""
    return diagnose_text(tmp_path, text if text.endswith("\n") else text + "\n").failure_kind
