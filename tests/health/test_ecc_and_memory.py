"""Memory errors: uncorrectable ECC and row-remap failures fail the GPU; pending repairs degrade it."""

from lazarus.health.models import Verdict
from tests.health.helpers import gpu_value, scrape


def test_volatile_double_bit_ecc_errors_fail_the_node(agent, gpus):
    gpus.set(1, "ecc_dbe_vol", 3)
    health = agent.poll()
    assert health.verdict is Verdict.FAILED
    assert health.gpus[1].ecc.dbe_volatile == 3
    assert any("3 uncorrectable (double-bit) ECC errors" in r for r in health.reasons)
    assert gpu_value(scrape(agent), "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 1) == 3.0


def test_corrected_and_historical_ecc_counts_are_exported_without_blame(agent, gpus):
    gpus.set(0, "ecc_sbe_vol", 12)
    gpus.set(0, "ecc_dbe_agg", 1)  # an old DBE, already handled by a remap
    health = agent.poll()
    assert health.verdict is Verdict.HEALTHY
    metrics = scrape(agent)
    assert gpu_value(metrics, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", 0) == 12.0
    assert gpu_value(metrics, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", 0) == 1.0


def test_a_row_remap_failure_fails_the_gpu(agent, gpus):
    gpus.set(0, "remap_unc", 2)
    gpus.set(0, "remap_failure", 1)
    health = agent.poll()
    assert health.verdict is Verdict.FAILED
    assert gpu_value(scrape(agent), "DCGM_FI_DEV_ROW_REMAP_FAILURE", 0) == 1.0
    assert gpu_value(scrape(agent), "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 0) == 2.0


def test_a_pending_row_remap_degrades_the_gpu_until_reset(agent, gpus):
    gpus.set(0, "remap_pending", 1)
    health = agent.poll()
    assert health.verdict is Verdict.DEGRADED
    assert "reset the GPU" in health.reasons[0]


def test_retired_pages_are_counted_and_a_pending_retirement_degrades(agent, gpus):
    gpus.set(1, "retired_dbe", 2)
    gpus.set(1, "retired_sbe", 5)
    gpus.set(1, "retired_pending", 1)
    health = agent.poll()
    assert (health.gpus[1].retired_pages.dbe, health.gpus[1].retired_pages.sbe) == (2, 5)
    assert health.verdict is Verdict.DEGRADED
    metrics = scrape(agent)
    assert gpu_value(metrics, "DCGM_FI_DEV_RETIRED_DBE", 1) == 2.0
    assert gpu_value(metrics, "DCGM_FI_DEV_RETIRED_PENDING", 1) == 1.0
