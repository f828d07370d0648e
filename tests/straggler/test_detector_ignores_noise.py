"""No finding for what is not a sustained, node-specific drop: jitter, blips, whole-job phases, recoveries."""

from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from tests.straggler.series import drop_at, healthy_job, jittery, job

DEFAULTS = StragglerThresholds()


def test_normal_jitter_gives_no_finding():
    for seed in range(20):
        nodes = {f"n{i}": jittery(30, spread=0.08, seed=seed * 10 + i) for i in range(8)}
        assert find_stragglers(job("1", nodes), DEFAULTS) == []


def test_a_drop_shorter_than_the_required_windows_is_a_blip():
    nodes = healthy_job("2")
    nodes["node1"] = drop_at(nodes["node1"], 28, 0.5)  # the last 2 windows only
    assert find_stragglers(job("2", nodes), DEFAULTS) == []


def test_a_whole_job_slowdown_does_not_blame_any_node():
    nodes = {n: drop_at(v, 20, 0.5) for n, v in healthy_job("3").items()}  # evaluation, checkpoint, storage
    assert find_stragglers(job("3", nodes), DEFAULTS) == []


def test_a_node_that_recovered_is_no_longer_a_straggler():
    nodes = healthy_job("4")
    nodes["node2"] = [v * (0.5 if 15 <= i < 25 else 1) for i, v in enumerate(nodes["node2"])]
    assert find_stragglers(job("4", nodes), DEFAULTS) == []


def test_a_node_that_was_always_a_little_slower_is_its_own_baseline():
    nodes = healthy_job("5")
    nodes["node1"] = [v * 0.7 for v in nodes["node1"]]
    assert find_stragglers(job("5", nodes), DEFAULTS) == []


def test_a_drop_smaller_than_the_threshold_is_tolerated():
    nodes = {n: [1000.0] * 30 for n in ("a", "b", "c")}
    nodes["c"] = drop_at(nodes["c"], 20, 0.8)  # 20% < 25%
    assert find_stragglers(job("6", nodes), DEFAULTS) == []


def test_a_missing_window_breaks_the_slow_run():
    nodes = {n: [1000.0] * 30 for n in ("a", "b", "c")}
    nodes["c"] = [None if i == 28 else (500.0 if i >= 25 else 1000.0) for i in range(30)]
    assert find_stragglers(job("7", nodes), DEFAULTS) == []  # only window 29 is slow after the gap


def test_windows_where_every_peer_stalled_are_not_judged():
    nodes = {n: [1000.0] * 20 + [0.0] * 10 for n in ("a", "b")}
    nodes["c"] = [1000.0] * 20 + [0.0] * 10
    assert find_stragglers(job("8", nodes), DEFAULTS) == []  # a hang is the hang detector's business
