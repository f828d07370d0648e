"""Log offsets survive a telemetry restart; a requeued job first seen without one is read from the end."""

from __future__ import annotations

from pathlib import Path

from lazarus.telemetry.offsets import OffsetStore


def test_offsets_survive_a_restart(tmp_path: Path):
    log, state = tmp_path / "job.out", tmp_path / "offsets.json"
    log.write_text("line 1\nline 2\n")
    store = OffsetStore(state)
    assert [t.text for t in store.read(str(log), 1 << 20)[0]] == ["line 1", "line 2"]
    store.save()
    with log.open("a") as f:
        f.write("line 3\n")
    again = OffsetStore(state)
    assert [t.text for t in again.read(str(log), 1 << 20)[0]] == ["line 3"]


def test_skip_to_end_starts_after_earlier_output_but_keeps_known_offsets(tmp_path: Path):
    old, known = tmp_path / "old.out", tmp_path / "known.out"
    old.write_text("attempt 0: NVRM: Xid 79\n")
    known.write_text("a\n")
    store = OffsetStore(None)
    store.read(str(known), 1 << 20)
    known.write_text("a\nb\n")
    store.skip_to_end([str(old), str(known)], "test")
    with old.open("a") as f:
        f.write("attempt 1: resuming\n")
    assert [t.text for t in store.read(str(old), 1 << 20)[0]] == ["attempt 1: resuming"]
    assert [t.text for t in store.read(str(known), 1 << 20)[0]] == ["b"]


def test_unreadable_offsets_file_is_ignored_not_fatal(tmp_path: Path):
    state = tmp_path / "offsets.json"
    state.write_text("{not json")
    assert OffsetStore(state).state.files == {}
