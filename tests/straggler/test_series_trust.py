"""A job's throughput series count only inside its allocation as Slurm shows it: a series naming another
node, or a job Slurm does not show running, is set aside before the detector sees it."""

from __future__ import annotations

from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from lazarus.straggler.trust import describe_ignored, trusted_series
from tests.straggler.series import drop_at, jittery, job

ALLOCATIONS = {"7": frozenset({"node1", "node2"})}


def test_series_inside_the_allocation_are_kept():
    kept, ignored = trusted_series(job("7", {"node1": [1.0], "node2": [1.0]}), ALLOCATIONS)
    assert [s.node for s in kept] == ["node1", "node2"] and ignored == []


def test_a_node_outside_the_allocation_or_an_unknown_job_is_set_aside():
    series = job("7", {"node1": [1.0], "node9": [1.0]}) + job("8", {"node1": [1.0]}) + job("", {"": [1.0]})
    kept, ignored = trusted_series(series, ALLOCATIONS)
    assert [(s.job_id, s.node) for s in kept] == [("7", "node1")]
    assert describe_ignored(ignored) == "job  node ?, job 7 node node9, job 8 node node1"


def test_a_spoofed_slow_node_never_becomes_a_finding():
    values = {
        "node1": jittery(30, seed=1),
        "node2": jittery(30, seed=2),
        "node9": drop_at(jittery(30, seed=3), 24, 0.5),
    }
    assert [f.node for f in find_stragglers(job("7", values), StragglerThresholds())] == ["node9"]
    kept, _ = trusted_series(job("7", values), ALLOCATIONS)
    assert find_stragglers(kept, StragglerThresholds()) == []


def test_spoofed_fast_peers_cannot_make_a_healthy_node_look_slow():
    values = {
        "node1": jittery(30, seed=1),
        "node2": jittery(30, seed=2),
        **{f"fake{i}": drop_at(jittery(30, seed=10 + i), 24, 3.0) for i in range(5)},
    }
    assert find_stragglers(job("7", values), StragglerThresholds()) != []  # the fakes outvote the job's nodes
    kept, _ = trusted_series(job("7", values), ALLOCATIONS)
    assert find_stragglers(kept, StragglerThresholds()) == []
