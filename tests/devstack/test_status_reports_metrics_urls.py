"""`dev status --json` reports the workers' metrics endpoints as `metrics_urls`, and both answer: Lazarus's
own metrics of every role, and the Temporal SDK's."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.devstack.conftest import lazarus

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]

WITH_WORKERS = {
    "LAZARUS_DEV__WORKERS": "true",
    "LAZARUS_DEV__METRICS_PORT": "47464",
    "LAZARUS_DEV__TEMPORAL_METRICS_PORT": "47465",
}


def test_status_lists_the_workers_metrics_endpoints_and_they_answer(lzdev: None) -> None:
    try:
        up = lazarus("dev", "up", extra_env=WITH_WORKERS)
        assert up.returncode == 0, up.stdout + up.stderr
        status = lazarus("dev", "status", "--json", extra_env=WITH_WORKERS)
        report = json.loads(status.stdout)
        assert report["metrics_urls"] == ["http://127.0.0.1:47464/metrics", "http://127.0.0.1:47465/metrics"]
        text = lazarus("dev", "status", extra_env=WITH_WORKERS).stdout
        assert "metrics: http://127.0.0.1:47464/metrics" in text
        own, sdk = (urllib.request.urlopen(url, timeout=10).read().decode() for url in report["metrics_urls"])
        for role in ("control", "scheduler", "telemetry"):
            assert f'lazarus_worker_info{{cluster="lzdev",role="{role}"' in own
        assert "temporal_num_pollers" in sdk or "temporal_worker_task_slots_available" in sdk
    finally:
        lazarus("dev", "down", extra_env=WITH_WORKERS)


def test_status_without_workers_lists_no_metrics_endpoints(lzdev: None) -> None:
    assert lazarus("dev", "up").returncode == 0
    assert json.loads(lazarus("dev", "status", "--json").stdout)["metrics_urls"] == []
