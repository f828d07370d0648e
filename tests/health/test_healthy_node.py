"""A node whose GPUs report nothing wrong is healthy, with every field actually read."""

from lazarus.health.models import RecoveryAction, Verdict
from tests.health.helpers import gpu_value, scrape


def test_a_clean_node_is_healthy_with_no_reasons(make_agent, gpus):
    gpus.set("*", "gpus", 4)
    health = make_agent().poll()
    assert health.verdict is Verdict.HEALTHY
    assert health.reasons == [] and health.xid_codes == []
    assert health.gpu_count == 4
    assert [g.uuid for g in health.gpus] == [f"GPU-fake-{i:04d}" for i in range(4)]
    assert health.driver_version == "999.99-fake"


def test_zero_counters_are_read_as_zero_not_unknown(agent, gpus):
    gpus.set("*", "nvlink_links", 2)
    gpu = agent.poll().gpus[0]
    assert gpu.ecc.dbe_volatile == 0 and gpu.ecc.sbe_aggregate == 0
    assert gpu.row_remap.failure is False and gpu.retired_pages.pending is False
    assert [link.link for link in gpu.nvlink] == [0, 1]
    assert gpu.recovery_action is RecoveryAction.NONE
    assert gpu.unknown_fields == {}


def test_the_node_health_metric_is_zero_for_a_healthy_node(agent):
    agent.poll()
    metrics = scrape(agent)
    assert metrics["lazarus_node_health"] == [({"Hostname": "gpu-node-1"}, 0.0)]
    assert gpu_value(metrics, "DCGM_FI_DEV_XID_ERRORS", 0) == 0.0
    assert gpu_value(metrics, "lazarus_gpu_health", 1) == 0.0


def test_idle_and_power_cap_clock_reasons_do_not_degrade_a_gpu(agent, gpus):
    gpus.set(0, "clocks_reasons", 0x1 | 0x4 | 0x10)  # idle, software power cap, sync boost
    assert agent.poll().verdict is Verdict.HEALTHY
