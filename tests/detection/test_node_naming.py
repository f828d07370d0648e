"""How nodes are named: rank prefixes through the layout, hostnames, kernel lines, Slurm, NCCL peers."""

from __future__ import annotations

import pytest

from lazarus.detection.engine import Analyzer
from lazarus.detection.layout import RankLayout
from lazarus.errors import ConfigError

ILLEGAL = "RuntimeError: CUDA error: an illegal memory access was encountered"


def nodes_of(lines, layout=None, known=None, file="job.log"):
    analyzer = Analyzer(layout=layout, known_nodes=known)
    for number, line in enumerate(lines, start=1):
        analyzer.feed(file, number, line)
    return analyzer.diagnosis()


def test_block_distribution_maps_ranks_to_nodes():
    layout = RankLayout.from_slurm("gpu[01-03]", 4)
    assert [layout.node_for_rank(r) for r in (0, 3, 4, 11, 12)] == ["gpu01", "gpu01", "gpu02", "gpu03", None]


def test_without_tasks_per_node_one_rank_per_node_is_assumed():
    layout = RankLayout.from_slurm("node[1-2]")
    assert layout.node_for_rank(1) == "node2"


def test_a_malformed_node_list_is_a_clear_error():
    with pytest.raises(ConfigError, match="cannot read node list"):
        RankLayout.from_slurm("node[1-")


def test_srun_label_prefix_goes_through_the_layout():
    assert nodes_of([f"5: {ILLEGAL}"], RankLayout.from_slurm("node[1-4]", 2)).implicated_nodes == ["node3"]


def test_rank_tag_goes_through_the_layout():
    assert nodes_of([f"[rank2]: {ILLEGAL}"], RankLayout.from_slurm("node[1-4]", 2)).implicated_nodes == ["node2"]


def test_slurmd_nodename_printed_per_rank_beats_the_computed_layout():
    lines = ["5: SLURMD_NODENAME=spare7", f"5: {ILLEGAL}"]
    assert nodes_of(lines, RankLayout.from_slurm("node[1-4]", 2)).implicated_nodes == ["spare7"]


def test_layout_learned_from_the_printed_slurm_environment():
    lines = ["0: SLURM_JOB_NODELIST=gpu[10-11]", "0: SLURM_TASKS_PER_NODE=4(x2)", f"6: {ILLEGAL}"]
    assert nodes_of(lines).implicated_nodes == ["gpu11"]


def test_kernel_line_names_its_syslog_host():
    line = (
        "May  1 12:00:03 gpu-a7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus."
    )
    assert nodes_of([line]).implicated_nodes == ["gpu-a7"]


def test_fully_qualified_host_is_shortened_to_a_known_node():
    line = (
        "2024-05-01T12:00:03+00:00 node3.cluster.local kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE"
    )
    assert nodes_of([line], known=["node3"]).implicated_nodes == ["node3"]


def test_slurm_hostlist_in_a_message_is_expanded():
    assert nodes_of(["srun: error: Node failure on node[2,4]"]).implicated_nodes == ["node2", "node4"]


def test_nccl_peer_address_is_resolved_from_bootstrap_lines():
    lines = [
        "nodeB:1:1 [0] NCCL INFO Bootstrap : Using ib0:192.168.5.2<0>",
        "nodeA:1:2 [0] NCCL WARN NET/IB : Got completion from peer 192.168.5.2<1234> with error 12, opcode 0, len 0",
    ]
    assert nodes_of(lines).implicated_nodes == ["nodeB"]


def test_a_known_node_named_in_the_file_name_is_the_last_resort():
    line = "[ 8812.3] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus."
    result = nodes_of([line], known=["node1", "node2"], file="/var/log/dmesg-node2.txt")
    assert result.implicated_nodes == ["node2"]


def test_a_known_node_named_in_the_text_is_used():
    line = "ERROR: Unable to determine the device handle for GPU0000:3B:00.0 on host node4: Unknown Error"
    assert nodes_of([line], known=["node4"]).implicated_nodes == ["node4"]


def test_a_rank_that_cannot_be_mapped_is_reported_in_the_notes():
    result = nodes_of([f"9: {ILLEGAL}"])
    assert result.implicated_nodes == []
    assert any("rank(s) 9 could not be mapped" in note for note in result.notes)


def test_a_known_node_is_matched_as_a_whole_name_only():
    line = "ERROR: Unable to determine the device handle for GPU0000:3B:00.0 on node10: Unknown Error"
    assert nodes_of([line], known=["node1", "node10"]).implicated_nodes == ["node10"]
    assert nodes_of([line], known=["node1"]).implicated_nodes == []
