"""Short runs of the scale and correlated-failure benchmarks (issue 11, items 2 and 3), so the harnesses cannot rot.

Each runs as a subprocess, exactly as an operator runs it, on its own embedded Temporal server (ports 62621-62633,
apart from the full runs' defaults) over the simulated Slurm controller: 50 watched jobs for a minute with crashes
injected under that load (the control role in a process of its own, as production runs it), and 50 jobs failing
at once on the same two nodes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.temporal, pytest.mark.slow]


def run_benchmark(script: str, args: list[str], out: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *args, "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=540,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{script} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    result: dict[str, object] = json.loads(out.read_text())
    return result


@pytest.mark.timeout(600)
def test_fifty_watched_jobs_for_a_minute_are_measured_and_every_injected_crash_is_recovered(tmp_path: Path) -> None:
    args = ["--jobs", "50", "--warmup", "10", "--steady", "60", "--crashes", "5", "--sample", "20"]
    result = run_benchmark("scale.py", [*args, "--port-base", "62621"], tmp_path / "scale.json")
    assert result["crashes_detected"] == "5/5" and result["crashes_recovered"] == "5/5"
    assert float(result["crash_detection_p95_s"]) < 30  # type: ignore[arg-type]
    assert float(result["workflow_tasks_per_job_hour"]) > 0 and int(result["telemetry_cycles"]) > 0  # type: ignore[arg-type]
    assert int(result["worker_rss_mib"]) > 0 and int(result["server_rss_mib"]) > 0  # type: ignore[arg-type]
    assert int(result["control_rss_mib"]) > 0  # type: ignore[arg-type]  # the control role in its own process


@pytest.mark.timeout(600)
def test_fifty_jobs_failing_on_the_same_two_nodes_are_each_requeued_once_and_each_node_drained_once(
    tmp_path: Path,
) -> None:
    args = ["--jobs", "50", "--spare", "30", "--warmup", "10", "--settle", "10", "--port-base", "62631"]
    result = run_benchmark("correlated.py", args, tmp_path / "correlated.json")
    assert result["recovered"] == 50 and result["requeue_commands"] == 50
    assert result["jobs_requeued_twice"] == [] and result["nodes_drained_twice"] == []
    assert result["drained_nodes"] == result["bad_nodes"] and result["drain_budget_respected"] is True
