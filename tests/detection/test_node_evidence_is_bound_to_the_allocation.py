"""A job's user controls everything the job prints: given the attempt's allocation, a node named in the
output counts only if it is one of the allocation's nodes, and a hostlist is never expanded beyond it.

Without an allocation (``lazarus diagnose`` on a file) names are taken as printed, but one hostlist is
still read only up to a bound.
"""

from __future__ import annotations

import time

import pytest

from lazarus.detection.context import MAX_HOSTLIST_NAMES
from lazarus.detection.engine import Analyzer
from lazarus.detection.layout import RankLayout, expand_bounded, expand_nodes, iter_nodes
from lazarus.errors import ConfigError

XID_ON = "May  1 12:00:03 {} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
ALLOCATION = ["node1", "node2"]


def diagnose(*lines: str, allocation: list[str] | None = ALLOCATION):
    analyzer = Analyzer(
        layout=RankLayout(nodes=list(allocation or []), tasks_per_node=1 if allocation else None),
        known_nodes=allocation,
        allocation=allocation,
    )
    for i, line in enumerate(lines, start=1):
        analyzer.feed("out", i, line)
    return analyzer.diagnosis()


def test_a_kernel_line_naming_a_node_outside_the_allocation_implicates_nobody_and_says_so():
    diagnosis = diagnose(XID_ON.format("node4"))
    assert diagnosis.signature == "xid_79_fallen_off_bus"
    assert diagnosis.implicated_nodes == []
    assert any("node4" in n and "outside its allocation" in n for n in diagnosis.notes)


def test_a_kernel_line_naming_a_node_of_the_allocation_still_implicates_it():
    diagnosis = diagnose(XID_ON.format("node2"))
    assert diagnosis.implicated_nodes == ["node2"]
    assert not any("outside" in n for n in diagnosis.notes)


def test_a_hostlist_of_99999_nodes_is_read_only_up_to_the_allocation_size():
    started = time.monotonic()
    diagnosis = diagnose("srun: error: Node failure on x[1-99999]")
    assert time.monotonic() - started < 1.0
    assert diagnosis.implicated_nodes == []
    assert any("more nodes than its allocation holds (2)" in n for n in diagnosis.notes)
    assert sum(len(n) for n in diagnosis.notes) < 2000


def test_a_hostlist_overlapping_the_allocation_implicates_only_the_allocations_nodes():
    diagnosis = diagnose("srun: error: Node failure on node[2-3]")
    assert diagnosis.implicated_nodes == ["node2"]
    assert any("node3" in n for n in diagnosis.notes)


def test_nodes_learned_from_the_output_do_not_widen_the_allocation():
    diagnosis = diagnose("1: SLURMD_NODENAME=node9", "1: RuntimeError: CUDA error: uncorrectable ECC error encountered")
    assert diagnosis.implicated_nodes == []
    assert any("node9" in n for n in diagnosis.notes)


def test_a_huge_nodelist_printed_by_the_job_is_not_materialized():
    started = time.monotonic()
    diagnose("SLURM_JOB_NODELIST=" + ",".join(f"p{i}[1-99999]" for i in range(2000)), XID_ON.format("node1"))
    assert time.monotonic() - started < 2.0


def test_without_an_allocation_one_hostlist_is_read_up_to_a_bound():
    diagnosis = diagnose("srun: error: Node failure on x[1-99999]", allocation=None)
    assert len(diagnosis.implicated_nodes) == MAX_HOSTLIST_NAMES
    assert any(f"more nodes than {MAX_HOSTLIST_NAMES}" in n for n in diagnosis.notes)


@pytest.mark.parametrize(
    "expression, names",
    [
        ("node[1-4],gpu7", ["node1", "node2", "node3", "node4", "gpu7"]),
        ("n[01-03,7]", ["n01", "n02", "n03", "n7"]),
        ("x[1-2]y[3-4]", ["x1y3", "x1y4", "x2y3", "x2y4"]),
        ("a,b,a", ["a", "b"]),
    ],
)
def test_hostlists_expand_as_slurm_writes_them(expression, names):
    assert expand_nodes(expression) == names


def test_a_hostlist_is_expanded_lazily():
    names, more = expand_bounded("x[1-999999999]y[1-999999999]", 3)
    assert (names, more) == (["x1y1", "x1y2", "x1y3"], True)
    assert next(iter_nodes("z[5-999999999999]")) == "z5"


@pytest.mark.parametrize("expression", ["n[1-", "n]", "n[[1]]", "n[a]", "n[3-1]", "", "a[1]" * 100])
def test_a_malformed_hostlist_is_a_config_error(expression):
    with pytest.raises(ConfigError):
        expand_nodes(expression)
