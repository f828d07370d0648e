"""NVLink error counters: read per active link, summed into the DCGM totals; errors degrade the GPU."""

from lazarus.health.agent import NodeAgent
from lazarus.health.assess import HealthThresholds
from lazarus.health.models import Verdict
from tests.health.helpers import gpu_value, scrape

CRC_FLIT, CRC_DATA, REPLAY, RECOVERY = 2, 3, 0, 1  # NVML_NVLINK_ERROR_DL_* counter ids


def test_nvlink_errors_degrade_the_gpu_and_name_the_link(agent, gpus):
    gpus.set("*", "nvlink_links", 18)
    gpus.set(1, f"nvlink.{CRC_FLIT}.3", 17)
    gpus.set(1, f"nvlink.{REPLAY}.3", 2)
    health = agent.poll()
    assert health.verdict is Verdict.DEGRADED
    assert len(health.gpus[1].nvlink) == 18
    assert any("NVLink 3: 17 CRC flit, 0 CRC data, 2 replay" in r for r in health.reasons)


def test_nvlink_counters_are_summed_over_links_with_dcgm_names(agent, gpus):
    gpus.set("*", "nvlink_links", 4)
    gpus.set(0, f"nvlink.{CRC_DATA}.0", 1)
    gpus.set(0, f"nvlink.{CRC_DATA}.2", 4)
    gpus.set(0, f"nvlink.{RECOVERY}.1", 1)
    agent.poll()
    metrics = scrape(agent)
    assert gpu_value(metrics, "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", 0) == 5.0
    assert gpu_value(metrics, "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", 0) == 1.0
    assert gpu_value(metrics, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 1) == 0.0


def test_nvlink_errors_below_the_operator_threshold_are_tolerated(reader, gpus):
    gpus.set("*", "nvlink_links", 2)
    gpus.set(0, f"nvlink.{CRC_FLIT}.1", 5)
    agent = NodeAgent(reader, "n1", HealthThresholds(nvlink_errors_degraded=100))
    assert agent.poll().verdict is Verdict.HEALTHY


def test_a_gpu_without_nvlink_reports_nvlink_as_unknown(agent):
    gpu = agent.poll().gpus[0]  # the fake's default: NVLink not supported (a PCIe card)
    assert gpu.nvlink is None
    assert gpu.unknown_fields["nvlink"] == "Not Supported"
    assert gpu_value(scrape(agent), "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 0) is None
