"""A log that ends in set-up or waiting output (issue 9, "hangs that show only as the last lines before
silence"): ``lazarus diagnose`` reads a finished file, which carries no clock, so it claims no failure and
says that the live hang watchdog decides; a log that ends in an exit record gets no such note."""

from __future__ import annotations

from lazarus.models.diagnosis import FailureKind
from tests.detection.logs import diagnose_text


def test_a_log_ending_in_nccl_set_up_claims_no_failure_and_says_the_watchdog_decides(tmp_path):
    text = "epoch 0 step 10 loss 2.3\nlearnfair062:40503:40616 [0] NCCL INFO Ring 06 : 0[0] -> 1[1] via P2P/IPC\n"
    result = diagnose_text(tmp_path, text)
    assert result.failure_kind is FailureKind.NONE and result.retry_advice is None
    assert any("ends in set-up or waiting output" in note and "hang watchdog" in note for note in result.notes)


def test_a_log_ending_in_a_wait_for_ranks_gets_the_note(tmp_path):
    result = diagnose_text(tmp_path, "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/5\n")
    assert result.failure_kind is FailureKind.NONE
    assert any("Initializing distributed" in note for note in result.notes)


def test_a_log_that_ends_after_an_exit_record_gets_no_note(tmp_path):
    text = "[rank0] training finished at step 30\nnode1:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Destroy COMPLETE\n"
    result = diagnose_text(tmp_path, text)
    assert not any("waiting output" in note for note in result.notes)


def test_a_log_ending_in_progress_output_gets_no_note(tmp_path):
    result = diagnose_text(tmp_path, "step: 92  loss:  2.78877  grad_norm:  0.3119\n")
    assert not any("waiting output" in note for note in result.notes)
