"""The restore benchmark's measures from a job's own output and its summary (benchmarks/restoration), on the
output the demo trainer really prints (two attempts appended to one file, ``srun --label``)."""

from __future__ import annotations

from benchmarks.restoration.measure import Run, read_log
from benchmarks.restoration.report import summarize, table
from benchmarks.restoration.workload import Arm

OUTPUT = """\
0: rank 0 on node1: attempt 0, resuming from checkpoint 0
1: rank 1 on node2: attempt 0, resuming from checkpoint 0
0: LAZARUS step=5 total_steps=24 loss=3.2 samples_per_s=512 checkpoint=5
0: LAZARUS step=6 total_steps=24 loss=3.1 samples_per_s=512
0: LAZARUS step=7 total_steps=24 loss=3.0 samples_per_s=512
1: [1764513667.512] node2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.
1: RuntimeError: CUDA error: unspecified launch failure
0: rank 0 on node1: attempt 1, resuming from checkpoint 5
1: rank 1 on node3: attempt 1, resuming from checkpoint 5
0: LAZARUS step=6 total_steps=24 loss=3.1 samples_per_s=512
0: LAZARUS step=7 total_steps=24 loss=3.0 samples_per_s=512
"""


def test_the_fault_is_the_xid_lines_own_timestamp_on_the_node_that_printed_it() -> None:
    log = read_log(OUTPUT)
    assert log.fault_at == 1764513667.512 and log.bad_node == "node2"


def test_progress_restored_is_the_next_attempts_first_step_and_steps_lost_count_from_its_checkpoint() -> None:
    log = read_log(OUTPUT)
    assert (log.first_step, log.resumed_from, log.last_step_before) == (6, 5, 7)


def test_no_progress_is_restored_before_the_next_attempt_prints_a_step() -> None:
    assert read_log(OUTPUT.rsplit("0: LAZARUS step=6", 1)[0]).first_step is None


def test_progress_restored_on_the_bad_node_does_not_count_as_restored() -> None:
    back = Run(arm=Arm.SLURM, bad_node="node2", progress_restored_s=21.0, on_bad_node=True)
    elsewhere = Run(arm=Arm.SLURM, bad_node="node2", progress_restored_s=22.0, on_bad_node=False)
    row = summarize([back, elsewhere])["slurm"]
    assert (row["restored_elsewhere"], row["on_bad_node"], row["runs"]) == (1, 1, 2)
    assert row["progress_restored_s"]["n"] == 2
    assert "| Slurm alone | 1/2 (1 back on the bad node) |" in table(summarize([back, elsewhere]))
