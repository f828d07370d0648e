"""Spec: `helm lint --strict` passes with the default values and with a production values file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helm.chart import CHART, PRODUCTION_VALUES, run_helm


@pytest.mark.parametrize("values", [[], ["-f", str(PRODUCTION_VALUES)]], ids=["default", "production"])
def test_strict_lint_passes(helm: Path, values: list[str]) -> None:
    result = run_helm(helm, "lint", "--strict", str(CHART), *values)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout
    assert "[WARNING]" not in result.stdout
