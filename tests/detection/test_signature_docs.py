"""docs/signatures.md is generated from the catalogue and must be regenerated with every catalogue edit."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_signature_docs", ROOT / "scripts" / "gen_signature_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_signature_reference_is_up_to_date():
    generated = _generator().render()
    current = (ROOT / "docs" / "signatures.md").read_text(encoding="utf-8")
    assert current == generated, "run: .venv/bin/python scripts/gen_signature_docs.py"


def test_the_reference_lists_every_signature_with_its_advice():
    from lazarus.detection.catalogue import default_catalogue

    text = (ROOT / "docs" / "signatures.md").read_text(encoding="utf-8")
    for sig in default_catalogue().signatures:
        assert f"### {sig.id}\n" in text


def test_the_how_to_guide_exists_and_names_the_generator():
    guide = (ROOT / "docs" / "adding-a-signature.md").read_text(encoding="utf-8")
    assert "scripts/gen_signature_docs.py" in guide and "tests/detection/corpus" in guide
