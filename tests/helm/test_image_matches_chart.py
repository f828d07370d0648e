"""Spec: the Dockerfile builds the image the chart expects: `lazarus` as entrypoint, run as the
numeric non-root user the chart's securityContext names (runAsNonRoot needs a numeric USER)."""

from __future__ import annotations

import re

import yaml

from tests.helm.chart import CHART, REPO

DOCKERFILE = (REPO / "Dockerfile").read_text()
VALUES = yaml.safe_load((CHART / "values.yaml").read_text())


def _instructions(name: str) -> list[str]:
    return re.findall(rf"^{name}\s+(.+)$", DOCKERFILE, flags=re.MULTILINE)


def test_the_image_runs_as_the_chart_user_and_group() -> None:
    (user,) = _instructions("USER")
    pod = VALUES["podSecurityContext"]
    assert user == f"{pod['runAsUser']}:{pod['runAsGroup']}"


def test_the_image_is_python_311_slim_with_lazarus_as_entrypoint() -> None:
    assert all(line.split()[0] == "python:3.11-slim" for line in _instructions("FROM"))
    assert _instructions("ENTRYPOINT") == ['["lazarus"]']


def test_the_image_never_writes_bytecode_on_the_read_only_root() -> None:
    assert "PYTHONDONTWRITEBYTECODE=1" in DOCKERFILE
