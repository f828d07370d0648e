"""Each spec sees only the LAZARUS_* variables it sets itself (a developer's shell may export some)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def clean_lazarus_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("LAZARUS_"):
            monkeypatch.delenv(name)
