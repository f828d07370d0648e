"""Fixtures for the configuration specs: a clean LAZARUS_* environment and a YAML writer."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def clean_lazarus_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each spec sees only the LAZARUS_* variables it sets itself (a developer's shell may export some)."""
    for name in list(os.environ):
        if name.startswith("LAZARUS_"):
            monkeypatch.delenv(name)


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    """Write YAML text to a fresh file and return its path."""

    def write(text: str) -> Path:
        path = tmp_path / "lazarus.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write
