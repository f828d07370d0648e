"""Helpers for the node-health tests: the fake NVML's script, metric scraping, CLI runs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from lazarus.health.agent import NodeAgent
from lazarus.health.metrics import build_registry

AGENT_PORTS = range(19101, 19110)  # this area's exporter ports


class FakeGpus:
    """Writes the fake library's script: per-GPU state lines and pending Xid events."""

    def __init__(self, root: Path) -> None:
        self.state = root / "nvml-state"
        self.events = root / "nvml-events"
        self.state.write_text("")
        self.events.write_text("")

    def set(self, gpu: int | str, key: str, value: object) -> None:
        with self.state.open("a") as f:
            f.write(f"{gpu} {key} {value}\n")

    def unsupported(self, gpu: int | str, function: str) -> None:
        self.set(gpu, "unsupported", function)

    def xid(self, gpu: int, code: int) -> None:
        with self.events.open("a") as f:
            f.write(f"{gpu} {code}\n")

    def env(self) -> dict[str, str]:
        return {"FAKE_NVML_STATE": str(self.state), "FAKE_NVML_EVENTS": str(self.events)}


def scrape(agent: NodeAgent) -> dict[str, list[tuple[dict[str, str], float]]]:
    """The agent's metrics as Prometheus would parse them: sample name -> [(labels, value)]."""
    return parse_metrics(generate_latest(build_registry(agent)).decode())


def parse_metrics(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Exposition text -> sample name -> [(labels, value)]."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def gpu_value(metrics: dict, name: str, gpu: int) -> float | None:
    """The sample of ``name`` for GPU index ``gpu``; None when there is none (unknown)."""
    for labels, value in metrics.get(name, []):
        if labels.get("gpu") == str(gpu):
            return value
    return None


def run_cli(args: list[str], env: dict[str, str], timeout: float = 30) -> subprocess.CompletedProcess:
    """``lazarus ARGS`` in a fresh interpreter, so LD_LIBRARY_PATH decides which NVML it finds."""
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"), **env}
    return subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", *args],
        env=full_env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def free_port(ports: range) -> int:
    """The first port of ``ports`` nobody listens on (each test area has its own range)."""
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")
