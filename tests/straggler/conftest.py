"""A real Prometheus server (the Debian ``prometheus`` binary) for the integration tests.

It starts once per session on 127.0.0.1:19090 (or the next free port up to
19099) with an empty TSDB in a temporary directory and the remote-write
receiver on, so tests push exact history instead of waiting for scrapes. It is
stopped (SIGTERM, then SIGKILL) at the end of the session.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.straggler.prometheus_server import running_prometheus

PORTS = range(19090, 19100)


@pytest.fixture(scope="session")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if shutil.which("prometheus") is None:
        pytest.skip("the Debian 'prometheus' package is not installed (scripts/install-system-deps.sh)")
    root = tmp_path_factory.mktemp("prometheus")
    with running_prometheus(root, "global:\n  scrape_interval: 15s\n", PORTS) as url:  # no targets: data is pushed
        yield url
