"""Start and stop a real Prometheus (the Debian binary) for tests, on a free port of a given range."""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.health.helpers import free_port


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"prometheus not ready after {timeout} s: {log.read_text()[-2000:]}")


@contextmanager
def running_prometheus(root: Path, config: str, ports: range) -> Iterator[str]:
    """Prometheus with ``config`` (YAML text), a TSDB under ``root`` and the remote-write receiver on; yields its URL.

    Stopped with SIGTERM (SIGKILL after 10 s) when the block ends, whatever happened in it.
    """
    binary = shutil.which("prometheus")
    if binary is None:  # callers skip before this; a direct caller gets a plain reason
        raise RuntimeError("the Debian 'prometheus' package is not installed (scripts/install-system-deps.sh)")
    (root / "prometheus.yml").write_text(config)
    port = free_port(ports)
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
