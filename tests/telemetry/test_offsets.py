"""A requeued job first seen without a saved offset is read from the end (offsets a term hands on to the next:
test_handover.py)."""

from __future__ import annotations

from pathlib import Path

from lazarus.telemetry.offsets import OffsetStore


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
