"""A real Prometheus server (the Debian ``prometheus`` binary) for the integration tests.

It starts once per session on 127.0.0.1:19090 (or the next free port up to
19099) with an empty TSDB in a temporary directory and the remote-write
receiver on, so tests push exact history instead of waiting for scrapes. It is
stopped (SIGTERM, then SIGKILL) at the end of the session.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.health.helpers import free_port

PORTS = range(19090, 19100)


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"prometheus exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"prometheus not ready after {timeout} s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("the Debian 'prometheus' package is not installed (scripts/install-system-deps.sh)")
    root = tmp_path_factory.mktemp("prometheus")
    (root / "prometheus.yml").write_text("global:\n  scrape_interval: 15s\n")  # no targets: data arrives by push
    port = free_port(PORTS)
    log = root / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [binary, f"--config.file={root / 'prometheus.yml'}", f"--storage.tsdb.path={root / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--web.enable-remote-write-receiver", "--log.level=warn"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
