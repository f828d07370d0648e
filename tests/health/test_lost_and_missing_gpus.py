"""A GPU that NVML reports as lost, or that is missing from enumeration, fails the node."""

from lazarus.health.models import Verdict
from tests.health.helpers import gpu_value, scrape


def test_a_lost_gpu_fails_the_node(agent, gpus):
    gpus.set(1, "lost", 1)
    health = agent.poll()
    assert health.gpus[1].lost is True
    assert health.verdict is Verdict.FAILED
    assert any("lost" in r for r in health.reasons)
    assert gpu_value(scrape(agent), "lazarus_gpu_lost", 1) == 1.0


def test_fewer_gpus_than_expected_fail_the_node(make_agent, gpus):
    gpus.set("*", "gpus", 3)
    health = make_agent(expected_gpus=4).poll()
    assert health.verdict is Verdict.FAILED
    assert "3 GPUs, 4 expected" in health.reasons[0]


def test_the_driver_recommending_a_reset_fails_the_gpu(agent, gpus):
    gpus.set(0, "recovery_action", 1)  # NVML_GPU_RECOVERY_ACTION_GPU_RESET
    health = agent.poll()
    assert health.verdict is Verdict.FAILED
    assert gpu_value(scrape(agent), "lazarus_gpu_recovery_action", 0) == 1.0


def test_the_driver_asking_to_drain_peer_to_peer_degrades_the_gpu(agent, gpus):
    gpus.set(0, "recovery_action", 3)  # NVML_GPU_RECOVERY_ACTION_DRAIN_P2P
    assert agent.poll().verdict is Verdict.DEGRADED


def test_hardware_thermal_throttling_degrades_the_gpu(agent, gpus):
    gpus.set(0, "clocks_reasons", 0x40)
    health = agent.poll()
    assert health.verdict is Verdict.DEGRADED
    assert "hardware thermal slowdown" in health.reasons[0]
    assert gpu_value(scrape(agent), "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 0) == 64.0
