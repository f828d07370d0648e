"""Whole-failure reasoning: one root, many victims; victims' nodes are never blamed."""

from __future__ import annotations

from lazarus.detection.engine import MAX_EVIDENCE_PER_CANDIDATE, Analyzer
from lazarus.detection.layout import RankLayout
from lazarus.models.diagnosis import FailureKind, RetryAdvice

LAYOUT = RankLayout.from_slurm("node[1-4]", 2)
REMOTE = (
    "{rank}: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
)
TIMEOUT = (
    "[rank{rank}]:[E501 12:10:00.1 ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 "
    "milliseconds before timing out."
)


def diagnose(lines, layout=LAYOUT):
    analyzer = Analyzer(layout=layout)
    for number, line in enumerate(lines, start=1):
        analyzer.feed("job.log", number, line)
    return analyzer.diagnosis()


def test_victims_before_the_root_do_not_win_and_are_not_blamed():
    lines = [REMOTE.format(rank=r) for r in (0, 1, 2)] + [
        "7: RuntimeError: CUDA error: an illegal memory access was encountered"
    ]
    result = diagnose(lines)
    assert result.signature == "cuda_illegal_address"
    assert result.implicated_nodes == ["node4"]


def test_only_victims_means_retry_without_blaming_anyone():
    result = diagnose([TIMEOUT.format(rank=r) for r in range(8)])
    assert result.failure_kind is FailureKind.HANG
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES
    assert result.implicated_nodes == []
    assert result.confidence < 0.75  # calibrated: victim-only advice was right about seven times in ten on dev


def test_of_two_equally_severe_roots_the_earliest_timestamp_wins():
    lines = [
        "May  1 12:00:09 node2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.",
        "May  1 12:00:01 node4 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.",
    ]
    result = diagnose(lines)
    assert result.evidence[0].line_no == 1  # evidence keeps input order
    assert result.implicated_nodes == ["node2", "node4"]  # both are broken GPUs, both excluded


def test_the_more_specific_signature_beats_the_earlier_generic_one():
    lines = [
        "[2024-05-01 12:00:00] 3: KeyError: 'x'",
        "[2024-05-01 12:00:05] 3: RuntimeError: CUDA error: uncorrectable ECC error encountered",
    ]
    assert diagnose(lines).signature == "cuda_ecc_uncorrectable"


def test_a_hardware_root_elsewhere_is_added_to_the_implicated_nodes():
    lines = [
        "May  1 12:00:01 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.",
        "May  1 12:00:02 node3 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE",
    ]
    result = diagnose(lines)
    assert result.signature == "xid_79_fallen_off_bus"
    assert result.implicated_nodes == ["node1", "node3"]


def test_a_signature_below_its_minimum_count_is_ignored():
    once = ["0: WARNING read failed: [Errno 5] Input/output error, retrying (1/3)"]
    assert diagnose(once).failure_kind is FailureKind.NONE
    assert diagnose(once * 2).signature == "storage_io_error"


def test_advisory_health_warnings_become_notes_not_failures():
    line = (
        "May  1 12:00:03 node2 kernel: NVRM: Xid (PCI:0000:3b:00): 63, pid=1, name=python, Row Remapper: New row "
        "marked for remapping, reset gpu to activate."
    )
    result = diagnose([line])
    assert result.failure_kind is FailureKind.NONE
    assert any("xid_63_row_remap_pending on node2" in note for note in result.notes)


def test_memory_stays_bounded_on_a_flood_of_matching_lines():
    analyzer = Analyzer(layout=LAYOUT)
    for number in range(20_000):
        analyzer.feed("flood.log", number + 1, REMOTE.format(rank=number % 8))
        analyzer.feed("flood.log", number + 1, f"{number % 8}: KeyError: 'k{number}'")
    assert len(analyzer.candidates) == 2
    for candidate in analyzer.candidates.values():
        assert len(candidate.evidence) <= MAX_EVIDENCE_PER_CANDIDATE
        assert len(candidate.locations) <= 256
    result = analyzer.diagnosis()
    assert len(result.evidence) <= 20
    assert result.signature == "python_exception"


def test_the_diagnosis_can_be_asked_for_while_streaming():
    analyzer = Analyzer(layout=LAYOUT)
    analyzer.feed("a.log", 1, REMOTE.format(rank=0))
    assert analyzer.diagnosis().signature == "nccl_remote_error"
    analyzer.feed("a.log", 2, "srun: error: Node failure on node2")
    assert analyzer.diagnosis().implicated_nodes == ["node2"]


def test_a_hardware_fault_beside_a_retry_as_is_root_is_noted_not_excluded():
    lines = [
        "slurmstepd: error: *** JOB 9 ON node1 CANCELLED AT 2024-05-01T12:00:03 DUE TO PREEMPTION ***",
        "May  1 12:00:01 node3 kernel: NVRM: Xid (PCI:0000:3b:00): 54, Auxiliary power is not connected to the GPU board",
    ]
    result = diagnose(lines)
    assert result.signature == "slurm_preempted"
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES
    assert result.implicated_nodes == []
    assert "hardware signature xid_54_power_clocking also seen on node3" in result.notes
