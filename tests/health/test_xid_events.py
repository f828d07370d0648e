"""Xid events from the NVML event set: fatal codes fail the node, for as long as the Xid window lasts."""

from datetime import UTC, datetime, timedelta

from lazarus.health.agent import NodeAgent
from lazarus.health.assess import HealthThresholds
from lazarus.health.models import Verdict
from tests.health.helpers import gpu_value, scrape


def test_xid_79_fails_the_node_and_names_the_gpu(agent, gpus):
    gpus.xid(1, 79)
    health = agent.poll()
    assert health.verdict is Verdict.FAILED
    assert health.xid_codes == [79]
    assert health.gpus[0].verdict is Verdict.HEALTHY
    assert health.gpus[1].verdict is Verdict.FAILED
    assert any("GPU-fake-0001" in r and "Xid 79" in r and "fallen off the bus" in r for r in health.reasons)


def test_xid_79_is_exported_with_dcgm_names(agent, gpus):
    gpus.xid(1, 79)
    agent.poll()
    metrics = scrape(agent)
    assert gpu_value(metrics, "DCGM_FI_DEV_XID_ERRORS", 1) == 79.0
    assert gpu_value(metrics, "DCGM_FI_DEV_XID_ERRORS", 0) == 0.0
    assert metrics["lazarus_node_health"][0][1] == 2.0
    assert ({"gpu": "1", "UUID": "GPU-fake-0001", "Hostname": "gpu-node-1", "xid": "79"}, 1.0) in metrics[
        "lazarus_xid_events_total"
    ]


def test_a_fatal_xid_keeps_failing_the_node_on_later_polls(agent, gpus):
    gpus.xid(0, 48)
    agent.poll()
    assert agent.poll().verdict is Verdict.FAILED  # the event was consumed by the first poll


def test_an_xid_older_than_the_window_no_longer_counts(reader, gpus):
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    agent = NodeAgent(reader, "n1", HealthThresholds(xid_window=timedelta(minutes=10)), clock=lambda: now[0])
    gpus.xid(0, 79)
    assert agent.poll().verdict is Verdict.FAILED
    now[0] += timedelta(minutes=11)
    health = agent.poll()
    assert health.verdict is Verdict.HEALTHY and health.xid_codes == []
    assert agent.xid_counts[(0, "GPU-fake-0000", 79)] == 1  # the lifetime counter remembers


def test_an_application_xid_is_recorded_but_does_not_blame_the_node(agent, gpus):
    gpus.xid(0, 13)  # graphics engine exception: usually the program's own illegal access
    health = agent.poll()
    assert health.verdict is Verdict.HEALTHY
    assert health.xid_codes == [13]


def test_a_degrading_xid_marks_the_gpu_degraded(agent, gpus):
    gpus.xid(0, 63)
    health = agent.poll()
    assert health.verdict is Verdict.DEGRADED
    assert "Xid 63" in health.reasons[0]


def test_several_pending_events_are_all_drained_in_one_poll(agent, gpus):
    for code in (79, 48, 13):
        gpus.xid(1, code)
    assert agent.poll().xid_codes == [13, 48, 79]
    assert gpus.events.read_text() == ""
