"""A node whose throughput drops by at least the threshold, relative to its peers, for long enough is named."""

import pytest

from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from tests.straggler.series import drop_at, healthy_job, job

DEFAULTS = StragglerThresholds()  # drop 25%, 3 windows, 3 baseline windows


def test_a_node_40_percent_slower_for_five_windows_is_named():
    nodes = healthy_job("101")
    nodes["node3"] = drop_at(nodes["node3"], 25, 0.6)
    (finding,) = find_stragglers(job("101", nodes), DEFAULTS)
    assert (finding.job_id, finding.node, finding.mode) == ("101", "node3", "relative")
    assert finding.windows == 5
    assert finding.drop_fraction == pytest.approx(0.4, abs=0.06)
    assert all(0.5 < e.score < 0.7 for e in finding.evidence)  # 0.6 give or take the jitter


def test_the_slow_run_is_counted_from_the_latest_window_back():
    nodes = healthy_job("102", n_windows=40)
    nodes["node2"] = drop_at(nodes["node2"], 28, 0.5)
    (finding,) = find_stragglers(job("102", nodes), DEFAULTS)
    assert finding.windows == 12
    assert finding.evidence[-1].end > finding.evidence[0].end


def test_two_node_jobs_compare_each_node_with_the_other():
    nodes = healthy_job("103", n_nodes=2)
    nodes["node1"] = drop_at(nodes["node1"], 26, 0.6)
    (finding,) = find_stragglers(job("103", nodes), DEFAULTS)
    assert finding.node == "node1"


def test_several_jobs_are_judged_independently_in_one_call():
    slow = healthy_job("201")
    slow["node4"] = drop_at(slow["node4"], 24, 0.55)
    findings = find_stragglers(job("201", slow) + job("202", healthy_job("202")), DEFAULTS)
    assert [(f.job_id, f.node) for f in findings] == [("201", "node4")]


def test_per_rank_series_name_the_rank_and_its_node():
    ranks = {"node1": [1000.0] * 20, "node2": drop_at([1000.0] * 20, 15, 0.5)}
    series = job("301", {"node1": ranks["node1"]}, rank="0") + job("301", {"node1": ranks["node1"]}, rank="1")
    series += job("301", {"node2": ranks["node2"]}, rank="2")
    (finding,) = find_stragglers(series, DEFAULTS)
    assert (finding.node, finding.rank, finding.where()) == ("node2", "2", "node2 rank 2")
