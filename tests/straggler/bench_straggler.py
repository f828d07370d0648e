"""Measure the straggler path at scale: remote-write history for many jobs, one query, the detector.

    .venv/bin/python -m tests.straggler.bench_straggler --jobs 500 --nodes 8

Starts its own Prometheus on 127.0.0.1:19091 (tmp TSDB, removed afterwards) and
prints push, query and detection times. Also times the pure detector on
10,000 synthetic jobs. Not collected by pytest (the name has no test_ prefix).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from lazarus.straggler.prometheus import PrometheusThroughput, ThroughputQuery
from tests.straggler.prometheus_server import running_prometheus
from tests.straggler.pushed_history import job_history, now_ms, push_history
from tests.straggler.series import drop_at, healthy_job, job


def _pure_detector(jobs: int, nodes: int) -> None:
    series = []
    for j in range(jobs):
        per_node = healthy_job(str(j), n_nodes=nodes, n_windows=30)
        if j % 100 == 0:
            per_node["node1"] = drop_at(per_node["node1"], 25, 0.6)
        series += job(str(j), per_node)
    started = time.perf_counter()
    findings = find_stragglers(series, StragglerThresholds())
    took = time.perf_counter() - started
    print(f"pure detector: {jobs} jobs x {nodes} nodes x 30 windows -> {len(findings)} findings in {took:.2f} s")


def _with_prometheus(jobs: int, nodes: int, port: int) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="lazarus-bench-prom-") as root,
        running_prometheus(Path(root), "global:\n  scrape_interval: 15s\n", range(port, port + 1)) as url,
    ):
        _measure(url, jobs, nodes)


def _measure(url: str, jobs: int, nodes: int) -> None:
    end = now_ms()
    names = [f"n{i:02d}" for i in range(nodes)]
    started = time.perf_counter()
    for j in range(jobs):
        slow = names[1] if j % 50 == 0 else None
        push_history(url, job_history(f"j{j}", names, end, slow, end - 6 * 60_000, ranks_per_node=1, seed=j))
    pushed = time.perf_counter() - started
    started = time.perf_counter()
    at = datetime.fromtimestamp(end / 1000, UTC)
    series = PrometheusThroughput(url, timeout_s=30).fetch(ThroughputQuery(), end=at)
    queried = time.perf_counter() - started
    started = time.perf_counter()
    findings = find_stragglers(series, StragglerThresholds())
    detected = time.perf_counter() - started
    expected = {f"j{j}" for j in range(0, jobs, 50)}
    correct = sum(f.job_id in expected and f.node == names[1] for f in findings)
    print(
        f"prometheus: pushed {jobs * nodes} series x 121 samples in {pushed:.1f} s; one query for all jobs "
        f"returned {len(series)} series in {queried * 1000:.0f} ms; detector {detected * 1000:.0f} ms; "
        f"findings {len(findings)} (expected {len(expected)}, correct {correct})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--pure-jobs", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=19091)
    args = parser.parse_args()
    _pure_detector(args.pure_jobs, args.nodes)
    _with_prometheus(args.jobs, args.nodes, args.port)


if __name__ == "__main__":
    main()
