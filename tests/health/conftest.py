"""Fixtures: a fake libnvidia-ml.so.1 built from lazarus/devstack/fake_nvml.c (the dev stack's own), scripted per
test through two small files.

The fake is loaded through the agent's ``--nvml-library`` path in this process
(``NvmlReader(library=...)``) and through ``LD_LIBRARY_PATH`` in subprocesses,
so both ways pynvml can find the library run the real pynvml ctypes code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lazarus.devstack.fake_nvml import build_fake_nvml
from lazarus.health.agent import NodeAgent
from lazarus.health.nvml import NvmlReader
from tests.health.helpers import AGENT_PORTS, FakeGpus, free_port


@pytest.fixture(scope="session")
def fake_nvml_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the compiled fake ``libnvidia-ml.so.1``."""
    out = tmp_path_factory.mktemp("fake-nvml")
    if build_fake_nvml(out) is None:
        pytest.fail("gcc is needed to build the fake libnvidia-ml.so.1: run make deps")
    return out


@pytest.fixture
def gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeGpus:
    """The fake's script for this test (two healthy GPUs until the test says otherwise)."""
    fake = FakeGpus(tmp_path)
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)  # os.environ writes through to the C getenv the fake reads
    return fake


@pytest.fixture
def reader(gpus: FakeGpus, fake_nvml_dir: Path) -> Iterator[NvmlReader]:
    with NvmlReader(library=fake_nvml_dir / "libnvidia-ml.so.1") as r:
        yield r


@pytest.fixture
def agent(reader: NvmlReader) -> NodeAgent:
    return NodeAgent(reader, "gpu-node-1")


@pytest.fixture
def make_agent(gpus: FakeGpus, fake_nvml_dir: Path) -> Iterator[Callable[..., NodeAgent]]:
    """Opens NVML when called, for tests that script what NVML enumerates or registers at init."""
    readers: list[NvmlReader] = []

    def make(node: str = "gpu-node-1", **kwargs: object) -> NodeAgent:
        readers.append(NvmlReader(library=fake_nvml_dir / "libnvidia-ml.so.1"))
        return NodeAgent(readers[-1], node, **kwargs)

    yield make
    for r in readers:
        r.close()


@pytest.fixture
def served_agent(gpus: FakeGpus, fake_nvml_dir: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    """``lazarus node-agent`` on 127.0.0.1 (fake NVML, node ``gpu-node-9``, 0.2 s polls); yields (process, port)."""
    port = free_port(AGENT_PORTS)
    env = {**os.environ, "LD_LIBRARY_PATH": str(fake_nvml_dir), **gpus.env()}
    with (tmp_path / "agent.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lazarus.cli.main", "node-agent", "--port", str(port), "--address", "127.0.0.1",
             "--interval", "0.2", "--node", "gpu-node-9"],
            env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    yield proc, port
    if proc.poll() is None:
        proc.kill()
        proc.wait()
