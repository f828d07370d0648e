"""Incremental tailing survives rotation, truncation, deletion, unreadable paths and giant lines."""

from __future__ import annotations

import os

from lazarus.detection.tail import MAX_LINE_BYTES, TailState, read_new_lines


def read(path, state, max_bytes=1 << 20):
    lines, state, notes = read_new_lines(path, state, max_bytes)
    return [text for _, text in lines], state, notes


def test_only_appended_complete_lines_are_returned(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"one\ntwo\npart")
    lines, state, notes = read(path, TailState())
    assert (lines, notes) == (["one", "two"], [])
    with open(path, "ab") as handle:
        handle.write(b"ial\nthree\n")
    lines, state, _ = read(path, state)
    assert lines == ["partial", "three"]
    numbered, _, _ = read_new_lines(path, TailState())
    assert [n for n, _ in numbered] == [1, 2, 3, 4]


def test_max_bytes_bounds_one_read_and_the_rest_comes_next_time(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    lines, state, _ = read(path, TailState(), max_bytes=100)
    assert len(lines) < 20
    everything = list(lines)
    while True:
        more, state, _ = read(path, state, max_bytes=100)
        if not more:
            break
        everything += more
    assert everything == [f"line {i}" for i in range(1000)]


def test_truncation_restarts_from_the_beginning_with_a_note(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"a\nb\nc\n")
    _, state, _ = read(path, TailState())
    path.write_bytes(b"new\n")
    lines, state, notes = read(path, state)
    assert lines == ["new"]
    assert "truncated" in notes[0]


def test_rotation_restarts_from_the_beginning_with_a_note(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"old1\nold2\n")
    _, state, _ = read(path, TailState())
    os.rename(path, tmp_path / "out.log.1")
    path.write_bytes(b"fresh1\nfresh2\nfresh3\n")
    lines, _, notes = read(path, state)
    assert lines == ["fresh1", "fresh2", "fresh3"]
    assert "rotated" in notes[0]


def test_a_deleted_file_gives_a_note_and_keeps_the_state(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"a\n")
    _, state, _ = read(path, TailState())
    path.unlink()
    lines, after, notes = read(path, state)
    assert lines == [] and after == state
    assert "does not exist" in notes[0]


def test_an_unreadable_path_gives_a_note(tmp_path):
    # We run as root, so a directory stands in for an unreadable file.
    lines, _, notes = read(tmp_path, TailState())
    assert lines == []
    assert "not a regular file" in notes[0]


def test_a_50_mb_line_is_cut_and_its_rest_skipped(tmp_path):
    path = tmp_path / "out.log"
    with open(path, "wb") as handle:
        handle.write(b"z" * (50 << 20) + b"\nafter\n")
    state, collected, notes = TailState(), [], []
    for _ in range(100):
        lines, state, more = read_new_lines(path, state, 8 << 20)
        collected += lines
        notes += more
        if state.files[str(path)].offset >= (50 << 20) + 7:
            break
    assert [n for n, _ in collected] == [1, 2]
    assert len(collected[0].text) == MAX_LINE_BYTES
    assert collected[1].text == "after"
    assert any("longer than 64 KiB" in n for n in notes)
    assert len(state.files[str(path)].partial) == 0


def test_invalid_utf8_is_replaced(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"caf\xe9 \xff\n")
    lines, _, _ = read(path, TailState())
    assert lines == ["caf\ufffd \ufffd"]


def test_a_utf8_character_split_across_reads_is_kept_whole(tmp_path):
    path = tmp_path / "out.log"
    data = "naïve\n".encode()
    path.write_bytes(data[:3])
    _, state, _ = read(path, TailState())
    path.write_bytes(data)
    lines, _, _ = read(path, state)
    assert lines == ["naïve"]


def test_the_state_survives_a_json_round_trip(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"a\n\xffpartial")
    _, state, _ = read(path, TailState())
    restored = TailState.model_validate_json(state.model_dump_json())
    assert restored == state
    with open(path, "ab") as handle:
        handle.write(b" end\n")
    lines, _, _ = read(path, restored)
    assert lines == ["\ufffdpartial end"]


def test_a_carriage_return_ends_a_line_so_a_redrawn_bar_is_seen_before_its_newline(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"start\n\r 10%|#| 1/10\r 20%|##| 2/10")
    lines, state, _ = read_new_lines(path, TailState())
    assert lines == [(1, "start"), (2, " 10%|#| 1/10"), (2, " 20%|##| 2/10")]
    with open(path, "ab") as handle:
        handle.write(b"\r 30%|###| 3/10\r100%|##########| 10/10\nnext\n")
    lines, _, _ = read_new_lines(path, state)
    assert lines == [(2, " 30%|###| 3/10"), (2, "100%|##########| 10/10"), (3, "next")]


def test_a_redraw_caught_half_written_is_returned_again_once_it_grew(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"\r 30%|###")
    lines, state, _ = read_new_lines(path, TailState())
    assert lines == [(1, " 30%|###")]
    with open(path, "ab") as handle:
        handle.write(b"| 3/10")
    lines, state, _ = read_new_lines(path, state)
    assert lines == [(1, " 30%|###| 3/10")]
    with open(path, "ab") as handle:
        handle.write(b"\n")
    lines, state, _ = read_new_lines(path, state)
    assert lines == []
    assert (state.files[str(path)].partial, state.files[str(path)].line_no) == (b"", 1)


def test_crlf_line_ends_and_blank_lines_read_as_before(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"dos line\r\n\nlast\r\n")
    lines, _, _ = read_new_lines(path, TailState())
    assert lines == [(1, "dos line"), (2, ""), (3, "last")]


def test_a_bar_that_never_prints_a_newline_keeps_the_state_small(tmp_path):
    path = tmp_path / "out.log"
    with open(path, "wb") as handle:
        handle.write(b"".join(b"\r%3d%%|bar| %d/100000" % (i // 1000, i) for i in range(100_000)))
    lines, state, _ = read_new_lines(path, TailState())
    assert len(lines) == 100_000 and lines[-1].text.endswith("99999/100000")
    assert {n for n, _ in lines} == {1}
    assert len(state.files[str(path)].partial) < 32


def test_an_overlong_redraw_is_cut_and_the_next_redraw_is_read_again(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"\r" + b"z" * (MAX_LINE_BYTES + 10))
    lines, state, notes = read_new_lines(path, TailState())
    assert [(n, len(t)) for n, t in lines] == [(1, MAX_LINE_BYTES)] and "skipped" in notes[0]
    with open(path, "ab") as handle:
        handle.write(b"zz\r 50%|bar| 5/10\r 60%|bar| 6/10\nafter\n")
    lines, state, _ = read_new_lines(path, state)
    assert lines == [(1, " 50%|bar| 5/10"), (1, " 60%|bar| 6/10"), (2, "after")]
    assert state.files[str(path)].partial == b""
