"""Spec: a worker is ready when it can open a TCP connection to the Temporal frontend.

The probe's exec command is run here for real, with this interpreter standing in for the image's
`python`, against a listening and a closed loopback port.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.helm.chart import ROLES, Manifests, container, render


def _probe_rc(helm: Path, port: int) -> int:
    rendered = render(helm, sets={"temporal.address": f"127.0.0.1:{port}"})
    command = container(rendered.deployment("control")["spec"]["template"]["spec"])["readinessProbe"]["exec"]["command"]
    assert command[0] == "python"
    return subprocess.run([sys.executable, *command[1:]], capture_output=True, timeout=10, check=False).returncode


def test_the_probe_succeeds_when_temporal_accepts_connections(helm: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        assert _probe_rc(helm, server.getsockname()[1]) == 0


def test_the_probe_fails_when_nothing_listens(helm: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    assert _probe_rc(helm, port) != 0


def test_every_role_has_the_probe_and_no_liveness_probe(default_manifests: Manifests) -> None:
    # No liveness probe on purpose: a Temporal outage must not put workers in a restart loop.
    for role in ROLES:
        worker = container(default_manifests.deployment(role)["spec"]["template"]["spec"])
        assert worker["readinessProbe"]["exec"]["command"][-2:] == ["temporal-frontend.temporal.svc", "7233"]
        assert "livenessProbe" not in worker
