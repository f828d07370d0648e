"""benchmarks/telemetry_cycle.py (one steady telemetry cycle at N watched jobs) stays runnable: a short run."""

from __future__ import annotations

import pytest

from benchmarks.telemetry_cycle import measure


@pytest.mark.asyncio
async def test_a_steady_cycle_over_fifty_jobs_is_measured() -> None:
    result = await measure(50, profile=False)
    assert result["jobs"] == 50 and 0 < result["steady_cycle_s"] < 5
    assert 0 <= result["of_which_simulated_squeue_s"] <= result["steady_cycle_s"]
