"""The path the bench stack (and a deployment) feeds straggler detection by: each training rank serves its
compute-only throughput and registers its port for Prometheus's ``file_sd_configs``; a real Prometheus scrapes it,
and the detector names the node whose rank computes 2x slower (the demo trainer's ``straggler`` fault)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from lazarus.demo.metrics import RankThroughput
from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from lazarus.straggler.prometheus import PrometheusThroughput, ThroughputQuery
from tests.straggler.prometheus_server import running_prometheus

REPO = Path(__file__).resolve().parents[2]
PORTS = range(19100, 19110)
WINDOW_S = 2


def test_a_rank_registers_its_throughput_endpoint_and_unregisters_when_it_closes(tmp_path: Path) -> None:
    rank = RankThroughput(tmp_path, "4242", "gpu-07", 3)
    rank.observe(samples=128, compute_s=0.25)
    (entry,) = json.loads((tmp_path / "4242-3.json").read_text())
    (target,) = entry["targets"]
    with urllib.request.urlopen(f"http://{target}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    assert 'lazarus_rank_samples_per_second{job_id="4242",node="gpu-07",rank="3"} 512.0' in text
    rank.close()
    assert list(tmp_path.iterdir()) == []


def _scrape_config(sd_dir: Path) -> str:
    return json.dumps(
        {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [
                {"job_name": "ranks", "honor_labels": True, "file_sd_configs": [{"files": [f"{sd_dir}/*.json"]}]}
            ],
        }
    )


def _rank(job_id: str, rank: int, node: str, sd_dir: Path, tmp: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, SLURM_JOB_ID=job_id, SLURM_PROCID=str(rank), SLURMD_NODENAME=node)
    argv = [sys.executable, "-m", "lazarus.demo.train", "--ckpt-dir", str(tmp / "ckpt"), "--steps", "80"]
    argv += ["--step-time", "0.25", "--fault", "straggler", "--fault-rank", "1", "--fault-step", "40"]
    argv += ["--metrics-sd-dir", str(sd_dir)]
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.prometheus
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_rank_computing_2x_slower_is_named_within_four_windows_of_scraped_throughput(tmp_path: Path) -> None:
    if shutil.which("prometheus") is None:
        pytest.skip("the Debian 'prometheus' package is not installed (scripts/install-system-deps.sh)")
    sd_dir = tmp_path / "targets"
    sd_dir.mkdir()
    job_id = f"t{uuid.uuid4().hex[:8]}"
    with running_prometheus(tmp_path, _scrape_config(sd_dir), PORTS) as url:
        ranks = [_rank(job_id, 0, "gpu-a", sd_dir, tmp_path), _rank(job_id, 1, "gpu-b", sd_dir, tmp_path)]
        try:
            started = time.monotonic()
            fault_at = started + 40 * 0.25  # the slowdown starts after step 40 (plus start-up)
            query = ThroughputQuery(job_ids=[job_id], window=timedelta(seconds=WINDOW_S))
            findings = []
            while not findings and time.monotonic() < started + 40:
                time.sleep(1.0)
                findings = find_stragglers(PrometheusThroughput(url).fetch(query), StragglerThresholds())
                assert not findings or time.monotonic() > fault_at, "a finding before the slowdown"
            assert [(f.job_id, f.node) for f in findings] == [(job_id, "gpu-b")]
            assert time.monotonic() - fault_at <= 4 * WINDOW_S + 2  # three slow windows, scrapes, start-up
        finally:
            for proc in ranks:
                proc.terminate()
                proc.wait(timeout=10)
    assert sorted(p.name for p in sd_dir.iterdir()) == []  # each rank unregistered at exit
