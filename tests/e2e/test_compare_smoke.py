"""A smoke run of benchmarks/compare.py (one fault of each kind per arm, short window) on its own stack ``lzbench``:
the harness runs end to end, and, on the real stack, a node failure (its slurmd, node agent and the job's processes
killed -9, the surviving rank blocked) is detected by Lazarus's liveness and the job runs elsewhere within 30 s; and a
rank computing 2x slower, whose throughput the stack's Prometheus scrapes, gets straggler advice within 3 of the
job's digest intervals (advice only: the bench policy leaves ``act_on_stragglers`` off), while Slurm alone never
notices it.

The script runs as a subprocess, as an operator runs it; the JSON it writes is what is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]


@pytest.mark.timeout(600)
def test_a_node_failure_is_found_by_liveness_and_the_job_runs_elsewhere_within_30_s(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    argv = [sys.executable, str(REPO / "benchmarks" / "compare.py"), "--crash", "1", "--node-fail", "1", "--hang", "1"]
    argv += ["--straggler", "1", "--window", "35", "--json", str(out)]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=560)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    runs = {(r["fault"], r["arm"]): r for r in result["runs"]}
    node = runs[("node-fail", "lazarus")]
    assert node["recovered"], node
    assert any("node-lost (liveness)" in n for n in node["notes"]), node["notes"]
    assert node["running_elsewhere_s"] <= 30, node
    assert runs[("crash", "lazarus")]["recovered"]
    assert set(result["summary"]) >= {"crash/lazarus", "crash/slurm", "node-fail/lazarus", "node-fail/slurm"}
    straggler = runs[("straggler", "lazarus")]
    assert any("anomaly straggler.throughput_drop (straggler)" in n for n in straggler["notes"]), straggler["notes"]
    assert straggler["advice"] == "none", straggler  # advice only, by the decision table
    assert straggler["anomaly_s"] + straggler["decision_s"] <= 3 * straggler["digest_interval_s"], straggler
    alone = runs[("straggler", "slurm")]
    assert alone["anomaly_s"] is None and alone["advice"] is None, alone
