"""A smoke run of benchmarks/restore.py (one run per arm, a short filler cadence) on its own stack ``lzrestore``:
the harness runs end to end, and on a cluster where every node is busy:

- with a spare pool, the job trains again on the reservation's spare within seconds, off the bad node, and the pool
  is refilled from the general pool once its node frees;
- without spares, Lazarus's restart waits for nodes but never runs on the bad node (expedite on or off);
- Slurm alone is measured on the same milestones from its own output and squeue.

The script runs as a subprocess, as an operator runs it; the JSON it writes is what is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESERVED = {"node1", "node2", "node3"}

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]


@pytest.mark.timeout(420)
def test_a_spare_restores_progress_within_seconds_and_no_lazarus_restart_runs_on_the_bad_node(tmp_path: Path) -> None:
    out = tmp_path / "restore.json"
    argv = [sys.executable, str(REPO / "benchmarks" / "restore.py"), "--runs", "1", "--filler-every", "6"]
    argv += ["--pending", "1", "--pending-s", "6", "--window", "60", "--json", str(out)]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    runs = {r["arm"]: r for r in result["runs"]}
    assert set(runs) == {"spares", "expedite", "plain", "slurm"}

    spares = runs["spares"]
    assert spares["source"] == "milestones" and spares["restored_elsewhere"], spares
    assert set(spares["next_nodes"]) <= RESERVED and spares["bad_node"] not in spares["next_nodes"], spares
    assert spares["progress_restored_s"] <= 20, spares
    assert spares["refilled_s"] is not None and spares["refilled_s"] >= spares["fillers_end_s"][0] - 1, spares

    for arm in ("expedite", "plain"):
        run = runs[arm]
        assert run["source"] == "milestones" and run["restored_elsewhere"], run
        assert run["completed_s"] is not None and run["steps_lost"] == 2, run
    assert runs["expedite"]["expedited"] is True and runs["plain"]["expedited"] is False

    slurm = runs["slurm"]
    assert slurm["source"] == "log+squeue" and slurm["progress_restored_s"] is not None, slurm
    assert slurm["requeued_s"] <= slurm["running_s"] <= slurm["progress_restored_s"] <= slurm["completed_s"], slurm
    assert "| Slurm alone |" in proc.stdout and "| Lazarus + spares |" in proc.stdout
