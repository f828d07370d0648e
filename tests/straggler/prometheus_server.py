"""Start and stop a real Prometheus (the Debian binary) for tests, on a free port of a given range."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.health.helpers import free_port


def _wait_ready(
    url: str,
    proc: subprocess.Popen,
    log: Path,
    timeout: float = 30.0,
    context: ssl.SSLContext | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            request = urllib.request.Request(f"{url}/-/ready", headers=headers or {})
            with urllib.request.urlopen(request, timeout=1, context=context) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"prometheus not ready after {timeout} s: {log.read_text()[-2000:]}")


@contextmanager
def running_prometheus(
    root: Path,
    config: str,
    ports: range,
    web_config: str | None = None,
    ready_context: ssl.SSLContext | None = None,
    ready_headers: dict[str, str] | None = None,
) -> Iterator[str]:
    """Prometheus with ``config`` (YAML text), a TSDB under ``root`` and the remote-write receiver on; yields its URL.

    ``web_config`` (YAML text, ``--web.config.file``) may turn on TLS (the URL is then https) and basic
    auth; ``ready_context`` and ``ready_headers`` are what the readiness check then needs. Stopped with
    SIGTERM (SIGKILL after 10 s) when the block ends, whatever happened in it.
    """
    binary = shutil.which("prometheus")
    if binary is None:  # callers skip before this; a direct caller gets a plain reason
        raise RuntimeError("the Debian 'prometheus' package is not installed (scripts/install-system-deps.sh)")
    (root / "prometheus.yml").write_text(config)
    port = free_port(ports)
    log = root / "prometheus.log"
    extra = []
    if web_config is not None:
        (root / "web.yml").write_text(web_config)
        extra.append(f"--web.config.file={root / 'web.yml'}")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [binary, f"--config.file={root / 'prometheus.yml'}", f"--storage.tsdb.path={root / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--web.enable-remote-write-receiver", "--log.level=warn",
             *extra],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    scheme = "https" if web_config is not None and "tls_server_config" in web_config else "http"
    url = f"{scheme}://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, log, context=ready_context, headers=ready_headers)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
