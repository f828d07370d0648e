"""A 3-minute chaos soak (benchmarks/chaos.py) holds every trust invariant: real jobs (healthy, noisy, crashing,
hanging, hostile; act and monitor mode) on the soak's own embedded stack while workers, the Temporal server and
slurmctld are killed, frozen and restarted.

The soak runs as a subprocess, exactly as an operator runs it, and must end with exit status 0 and a PASS verdict
as its last line. Invariants that still fail because of product gaps other engineers are closing (issue 8) are
listed in :data:`OPEN_PRODUCT_GAPS` with the item that closes them: while one of those, and only those, fails, the
test is an expected failure naming them; any other failure, or a soak that cannot run, fails the test. Remove an
entry when its item lands.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VERDICT = re.compile(r"^VERDICT: (PASS|FAIL) \((\d+)/8 invariants, (\d+) jobs, (\d+) faults(?:; failed: (.*))?\)$")
OPEN_PRODUCT_GAPS: dict[str, str] = {}  # every gap the soak found is closed (issue 8 items 2, 7-9)

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]


@pytest.mark.timeout(900)
def test_a_three_minute_chaos_soak_holds_every_invariant(tmp_path: Path) -> None:
    result = tmp_path / "chaos.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "chaos.py"),
            "--duration",
            "180",
            "--seed",
            "1",
            "--json",
            str(result),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=840,
        stdin=subprocess.DEVNULL,
    )
    lines = proc.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    match = VERDICT.match(last)
    assert match, f"no verdict line (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    if proc.returncode == 1 and match.group(5):
        failed = [name.strip() for name in match.group(5).split(", ")]
        if set(failed) <= set(OPEN_PRODUCT_GAPS):
            pytest.xfail("; ".join(f"{name}: {OPEN_PRODUCT_GAPS[name]}" for name in failed))
    assert proc.returncode == 0 and match.group(1) == "PASS", proc.stdout[-6000:]
    assert int(match.group(3)) > 0 and int(match.group(4)) > 0, last
