"""An operator's `lazarus nodes drain|resume` before any node ledger runs (a fresh deployment whose telemetry
worker has not yet made its first cycle) is one line that says so, and changes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize("args", [("resume", "node1"), ("drain", "node1", "--reason", "fan")])
async def test_a_node_action_with_no_ledger_running_says_no_ledger_runs_yet(ts_env, tmp_path, args):
    config = tmp_path / "lazarus.yaml"
    config.write_text(f'cluster: nowhere\ntemporal:\n  address: "{ts_env.client.service_client.config.target_host}"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", "--config", str(config), "nodes", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1, proc.stderr
    assert "no node ledger runs for cluster nowhere yet" in proc.stderr and "nothing was changed" in proc.stderr
