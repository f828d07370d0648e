"""A 3-minute chaos soak (benchmarks/chaos.py) holds every trust invariant: real jobs (healthy, noisy, crashing,
hanging, hostile; act and monitor mode) on the soak's own embedded stack, with one node agent per node, while
workers, the Temporal server and slurmctld are killed, frozen and restarted.

The soak runs as a subprocess, exactly as an operator runs it, and must end with exit status 0 and a PASS verdict
as its last line. Its ``--json`` result then shows every invariant held, and that the drain invariant was not
vacuous: Lazarus drained nodes during the run, each corroborated from outside the job (the node agent reporting
the fault the crashing job's GPU raised), and no drain rests on a hostile job's word.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
VERDICT = re.compile(r"^VERDICT: (PASS|FAIL) \((\d+)/8 invariants, (\d+) jobs, (\d+) faults(?:; failed: (.*))?\)$")
DRAINS = "no node drained without corroboration"

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]


def run_soak(result: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(REPO / "benchmarks" / "chaos.py"), "--duration", "180", "--seed", "1"]
    return subprocess.run(
        [*argv, "--json", str(result)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=840,
        stdin=subprocess.DEVNULL,
    )


def hostile_drains(data: dict[str, Any]) -> list[str]:
    """Drains whose ledger record names a hostile job among its implications."""
    hostile = {f["plan"]["job_id"] for f in data["jobs"] if f["plan"]["kind"] == "hostile"}
    return [
        d["node"]
        for d in data["drains"]
        if hostile & {i.get("job_id") for i in (d.get("ledger_record") or {}).get("implications", [])}
    ]


@pytest.mark.timeout(900)
def test_a_three_minute_chaos_soak_holds_every_invariant_with_drains_the_node_agents_corroborated(
    tmp_path: Path,
) -> None:
    proc = run_soak(tmp_path / "chaos.json")
    lines = proc.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    match = VERDICT.match(last)
    assert match, f"no verdict line (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0 and match.group(1) == "PASS", proc.stdout[-6000:]
    assert int(match.group(3)) > 0 and int(match.group(4)) > 0, last

    result = json.loads((tmp_path / "chaos.json").read_text())
    invariants = {i["name"]: i for i in result["invariants"]}
    assert len(invariants) == 8 and all(not i["violations"] for i in invariants.values()), invariants
    drains = invariants[DRAINS]
    assert drains["checked"] > 0, "the soak drained no node: the corroboration invariant was not exercised"
    assert drains["note"].startswith(f"{drains['checked']} corroborated:"), drains
    assert "by the node agent" in drains["note"], drains
    assert hostile_drains(result["data"]) == [], "a hostile job's word drained a node"
