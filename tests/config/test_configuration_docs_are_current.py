"""Spec: docs/configuration.md is generated from the Settings model, is up to date, and documents
every field with a description."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lazarus.config import load_settings

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "scripts" / "gen_config_docs.py"


def _generator() -> ModuleType:
    """The generator script, imported as a module (scripts/ is not a package)."""
    if "gen_config_docs" in sys.modules:
        return sys.modules["gen_config_docs"]
    spec = importlib.util.spec_from_file_location("gen_config_docs", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_config_docs"] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def test_the_committed_page_matches_the_model() -> None:
    # A clean environment: LAZARUS_STATE_DIR_DEFAULT would change a documented default.
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZARUS_")}
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_every_field_has_a_type_default_env_name_and_description() -> None:
    sections = _generator()._sections()
    rows = [row for _, _, section_rows in sections for row in section_rows]
    assert len(rows) > 40
    for row in rows:
        assert row.description, f"{row.key} has no description in lazarus/config.py"
        assert row.type and row.default
        if "[]" in row.key:  # a field of a list's items: the list is one variable holding JSON
            assert row.env == "(in the list's JSON)"
        else:
            assert row.env == "LAZARUS_" + row.key.upper().replace(".", "__")


def test_the_defaults_block_is_a_loadable_configuration(tmp_path: Path) -> None:
    page = _generator().render()
    block = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "defaults.yaml"
    path.write_text(block, encoding="utf-8")
    assert load_settings(path).model_dump() == load_settings().model_dump()


def test_check_mode_reports_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generator = _generator()
    stale = tmp_path / "configuration.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(generator, "DOC", stale)
    monkeypatch.setattr(generator, "REPO", tmp_path)
    assert generator.main(["--check"]) == 1
    assert generator.main([]) == 0
    assert generator.main(["--check"]) == 0
