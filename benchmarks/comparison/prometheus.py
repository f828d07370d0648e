"""The bench stack's Prometheus: what Lazarus's straggler detection and node-health reads query in production.

The Debian ``prometheus`` binary on 127.0.0.1:63090, its TSDB and configuration under ``<stack>/prometheus``
(fresh at each ``up``), scraping every second:

- ``lazarus-ranks``: each training rank's ``lazarus_rank_samples_per_second`` (docs/stragglers.md), found through
  ``file_sd_configs`` in ``<stack>/prometheus/targets``: every rank registers its own ``/metrics`` port there
  (``lazarus.demo.metrics``), as a job prolog registers a job's ranks on a shared directory in production;
- ``lazarus-node-agents``: the node agents' ``lazarus_node_health`` (the verdict a drain needs once
  ``prometheus.enabled`` is on, lazarus/health/verdicts.py).

Scraping rather than remote write because that is how a deployment collects a trainer's gauge (``prometheus_client``
serves it; remote write needs a client that speaks the protocol). ``honor_labels`` keeps the series' own labels.
"""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from lazarus.devstack.component import Component, port_open
from lazarus.devstack.layout import Layout

PORT = 63090
"""The comparison stack's port; a stack built on it elsewhere (the restore benchmark's) passes its own."""
SCRAPE_INTERVAL = "1s"


def root(layout: Layout) -> Path:
    return layout.root / "prometheus"


def targets_dir(layout: Layout) -> Path:
    """Where the ranks register their metrics ports (the trainer's ``--metrics-sd-dir``)."""
    return root(layout) / "targets"


def url(port: int = PORT) -> str:
    return f"http://127.0.0.1:{port}"


def config(layout: Layout, agent_targets: list[str]) -> dict[str, Any]:
    """prometheus.yml, as a mapping."""
    return {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "scrape_timeout": SCRAPE_INTERVAL},
        "scrape_configs": [
            {
                "job_name": "lazarus-ranks",
                "honor_labels": True,
                "file_sd_configs": [{"files": [str(targets_dir(layout) / "*.json")], "refresh_interval": "5s"}],
            },
            {"job_name": "lazarus-node-agents", "honor_labels": True, "static_configs": [{"targets": agent_targets}]},
        ],
    }


def ready(port: int = PORT) -> bool:
    if not port_open(port):
        return False
    try:
        with urllib.request.urlopen(f"{url(port)}/-/ready", timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def component(layout: Layout, env: dict[str, str], agent_targets: list[str], port: int = PORT) -> Component:
    """Prometheus as a stack component; ``prepare`` writes a fresh configuration and TSDB."""
    base = root(layout)

    def prepare() -> None:
        shutil.rmtree(base / "data", ignore_errors=True)
        targets_dir(layout).mkdir(parents=True, exist_ok=True)
        targets_dir(layout).chmod(0o1777)  # every job's ranks register here, whoever runs them
        (base / "prometheus.yml").write_text(yaml.safe_dump(config(layout, agent_targets), sort_keys=False))

    binary = shutil.which("prometheus") or "/usr/bin/prometheus"
    argv = [
        binary,
        f"--config.file={base / 'prometheus.yml'}",
        f"--storage.tsdb.path={base / 'data'}",
        "--storage.tsdb.retention.time=1d",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    return Component(name="prometheus", argv=argv, env=env, port=port, ready=lambda: ready(port), prepare=prepare)
