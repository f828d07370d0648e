"""The demo trainer's per-rank throughput gauge, as docs/stragglers.md asks training jobs to publish it.

Each rank serves ``lazarus_rank_samples_per_second{job_id, node, rank}`` on its own HTTP port (``/metrics``) and
registers that port for Prometheus's ``file_sd_configs``: one JSON file per rank, ``<job_id>-<rank>.json``, in a
directory Prometheus watches (a shared directory in production, as a job prolog would write it). The file is
written atomically (Prometheus reads only ``*.json``) and removed when the rank exits; a rank killed -9 leaves a
target that no longer answers, which Prometheus marks down and whose series go stale.

The value is **compute-only** throughput (samples per second of the rank's own compute, collectives excluded): in a
synchronous job every rank waits for the slowest, so only compute time tells which node is slow.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, start_http_server

METRIC = "lazarus_rank_samples_per_second"


class RankThroughput:
    """One rank's gauge, served on an ephemeral port and registered under ``sd_dir``."""

    def __init__(self, sd_dir: Path, job_id: str, node: str, rank: int, address: str = "127.0.0.1") -> None:
        self.registry = CollectorRegistry()
        gauge = Gauge(METRIC, "compute-only training throughput", ["job_id", "node", "rank"], registry=self.registry)
        self.labels = gauge.labels(job_id, node, str(rank))
        self.server, _ = start_http_server(0, addr=address, registry=self.registry)
        host = socket.gethostname() if address in ("0.0.0.0", "::") else address
        self.target = sd_dir / f"{job_id}-{rank}.json"
        entry = [{"targets": [f"{host}:{self.server.server_port}"], "labels": {"lazarus_job": job_id}}]
        tmp = sd_dir / f".{job_id}-{rank}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(entry))
        tmp.replace(self.target)
        atexit.register(self.close)

    def observe(self, samples: float, compute_s: float) -> None:
        """One step: ``samples`` processed in ``compute_s`` seconds of the rank's own compute."""
        if compute_s > 0:
            self.labels.set(samples / compute_s)

    def close(self) -> None:
        """Unregister the target and stop serving."""
        with contextlib.suppress(OSError):
            self.target.unlink()
        self.server.shutdown()
