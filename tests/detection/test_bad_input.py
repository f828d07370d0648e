"""Odd input never crashes the diagnosis: it is read, or refused with one clear sentence."""

from __future__ import annotations

import os

import pytest

from lazarus.detection.reader import MAX_LINE_BYTES, diagnose_files
from lazarus.errors import LogReadError
from lazarus.models.diagnosis import FailureKind

XID79 = (
    b"May  1 12:00:03 node2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"
)


def test_binary_garbage_is_read_without_a_crash(tmp_path):
    path = tmp_path / "core.bin"
    path.write_bytes(os.urandom(3 << 20))
    result = diagnose_files([path])
    assert result.failure_kind in (FailureKind.NONE, FailureKind.CRASH)  # random bytes may spell nothing


def test_a_failure_after_binary_garbage_is_still_found(tmp_path):
    path = tmp_path / "mixed.log"
    path.write_bytes(b"\x00\xff\xfe" * 100_000 + b"\n" + XID79)
    result = diagnose_files([path])
    assert result.signature == "xid_79_fallen_off_bus"
    assert result.evidence[0].line_no == 2


def test_a_50_mb_line_is_cut_with_a_note_and_the_next_line_still_counts(tmp_path):
    path = tmp_path / "huge.log"
    with open(path, "wb") as handle:
        handle.write(b"x" * (50 << 20))
        handle.write(b"\n" + XID79)
    result = diagnose_files([path])
    assert result.signature == "xid_79_fallen_off_bus"
    assert result.evidence[0].line_no == 2
    assert any("longer than 64 KiB" in note for note in result.notes)


def test_a_keyword_inside_a_giant_line_is_seen_in_its_first_64_kib_only(tmp_path):
    path = tmp_path / "giant-error.log"
    path.write_bytes(
        b"3: RuntimeError: CUDA error: an illegal memory access was encountered " + b"y" * (MAX_LINE_BYTES * 3)
    )
    result = diagnose_files([path])
    assert result.signature == "cuda_illegal_address"
    assert len(result.evidence[0].text) <= 500


def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    path = tmp_path / "latin1.log"
    path.write_bytes(b"3: RuntimeError: CUDA error: an illegal memory access was encountered \xe9\xff\n")
    result = diagnose_files([path])
    assert result.signature == "cuda_illegal_address"
    assert "\ufffd" in result.evidence[0].text


def test_an_empty_file_gives_no_failure_and_says_so(tmp_path):
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    result = diagnose_files([path])
    assert result.failure_kind is FailureKind.NONE
    assert any("is empty" in note for note in result.notes)


def test_a_last_line_without_newline_is_read(tmp_path):
    path = tmp_path / "tail.log"
    path.write_bytes(XID79.rstrip(b"\n"))
    assert diagnose_files([path]).evidence[0].line_no == 1


def test_line_numbers_stay_right_across_block_boundaries(tmp_path):
    path = tmp_path / "long.log"
    filler = b"0: iteration 1/ 2 | lm loss: 2.0 |\n"
    count = (3 << 20) // len(filler)
    path.write_bytes(filler * count + XID79)
    assert diagnose_files([path]).evidence[0].line_no == count + 1


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(LogReadError, match="no such file"):
        diagnose_files([tmp_path / "missing.log"])


def test_a_directory_is_a_clear_error_even_for_root(tmp_path):
    # chmod 000 does not stop root; a directory really cannot be read as a log.
    with pytest.raises(LogReadError, match="is a directory"):
        diagnose_files([tmp_path])


def test_no_files_is_a_clear_error():
    with pytest.raises(LogReadError, match="no log files"):
        diagnose_files([])


def test_a_fifo_is_refused_instead_of_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(LogReadError, match="not a regular file"):
        diagnose_files([fifo])
