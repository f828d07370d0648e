"""Spec: importing lazarus.config reads no LAZARUS_* variable; the environment is read when the
settings load, so even a hostile environment cannot break an import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lazarus.config import load_settings

HOSTILE = {
    "LAZARUS_TEMPORAL": "{",
    "LAZARUS_MODE": "yolo",
    "LAZARUS_DEV__TEMPORAL_PORT": "not-a-port",
    "LAZARUS_CONFIG": "/nonexistent/lazarus.yaml",
    "LAZARUS_STATE_DIR_DEFAULT": "/nonexistent/state",
}

# Records every LAZARUS_* lookup in os.environ (iteration with items() looks each key up too),
# imports the module, then loads: what was read before and after, and how the load ended.
PROBE = """
import json, os
reads = []
class Recording(type(os.environ)):
    def __getitem__(self, key):
        if str(key).startswith("LAZARUS_"):
            reads.append(key)
        return super().__getitem__(key)
os.environ.__class__ = Recording
import lazarus.config
at_import = sorted(set(reads))
try:
    lazarus.config.load_settings()
    outcome = "loaded"
except lazarus.errors.ConfigError as exc:
    outcome = str(exc)
print(json.dumps({"at_import": at_import, "at_load": sorted(set(reads)), "outcome": outcome}))
"""


def _probe() -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZARUS_")} | HOSTILE
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_import_succeeds_in_a_hostile_environment_and_reads_nothing() -> None:
    assert _probe()["at_import"] == []


def test_the_environment_is_read_and_refused_only_when_the_settings_load() -> None:
    result = _probe()
    assert "LAZARUS_CONFIG" in result["at_load"]
    assert result["outcome"] == "configuration file /nonexistent/lazarus.yaml does not exist"


def test_the_state_dir_default_follows_the_environment_at_load_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAZARUS_STATE_DIR_DEFAULT", str(tmp_path))
    assert load_settings().dev.state_dir == tmp_path
