"""Missing-rank inference: when every rank but one reports the same collective timing out, the rank that
never reported is the one the others waited for, and its node is the one to blame."""

from __future__ import annotations

from lazarus.detection.layout import RankLayout
from lazarus.detection.reader import diagnose_files
from lazarus.models.diagnosis import FailureKind, RetryAdvice

TIMEOUT = (
    "[rank{r}]:[E1030 03:19:32.585495736 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=1341, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
    "ran for 600766 milliseconds before timing out.\n"
)


def _diagnose(tmp_path, ranks, nodes="node[1-2]", tasks_per_node=4):
    path = tmp_path / "job.log"
    path.write_text("".join(TIMEOUT.format(r=r) for r in ranks))
    layout = RankLayout.from_slurm(nodes, tasks_per_node)
    return diagnose_files([path], layout=layout, known_nodes=layout.nodes)


def test_the_one_rank_that_never_reports_a_timeout_names_the_node_to_exclude(tmp_path):
    result = _diagnose(tmp_path, [0, 1, 2, 3, 4, 6, 7])  # rank 5 (node2) never reported
    assert result.failure_kind is FailureKind.HANG
    assert result.implicated_nodes == ["node2"]
    assert result.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES
    assert any("rank 5" in note for note in result.notes)


def test_when_every_rank_reports_the_timeout_no_node_is_blamed(tmp_path):
    result = _diagnose(tmp_path, range(8))
    assert result.implicated_nodes == []
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES


def test_when_two_ranks_are_missing_no_node_is_blamed(tmp_path):
    result = _diagnose(tmp_path, [0, 1, 2, 3, 4, 7])
    assert result.implicated_nodes == []


def test_without_a_rank_layout_nothing_is_inferred(tmp_path):
    path = tmp_path / "job.log"
    path.write_text("".join(TIMEOUT.format(r=r) for r in [0, 1, 2]))
    result = diagnose_files([path])
    assert result.implicated_nodes == []
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES


def test_a_single_reporting_rank_is_too_little_to_infer_from(tmp_path):
    result = _diagnose(tmp_path, [1], nodes="node1", tasks_per_node=2)
    assert result.implicated_nodes == []
