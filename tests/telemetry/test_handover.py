"""The offsets a telemetry term hands to the next: the next holder reads on from the last position whose lines
all reached the workflows; lines still being reported are read again, never skipped; renewals stay small."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from lazarus.models.lease import LogOffset
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.telemetry.handover import UNCLAIMED_CYCLES, Handover, restored_state
from lazarus.telemetry.offsets import OffsetStore
from lazarus.telemetry.tracker import SETTLE, JobTracker

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)
XID = "1: [1700000000.000] node2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


def watched(path: Path) -> JobTracker:
    tracker = JobTracker(job_id=7, layout_nodes=["node1", "node2"], log_paths=[str(path)])
    tracker.observe(JobSnapshot(job_id=7, state=JobState.RUNNING, nodes=["node1", "node2"], start_time=T0), T0)
    return tracker


def read(store: OffsetStore, tracker: JobTracker, path: Path) -> list[str]:
    lines = [t.text for t in store.read(str(path), 1 << 20).lines]
    for no, text in enumerate(lines):
        tracker.feed(str(path), no, text, T0)
    return lines


def takeover(handover: Handover) -> OffsetStore:
    """What the lease hands the next term: the offsets renewals carried."""
    offsets, _ = handover.pending()
    return OffsetStore(restored_state(offsets))


def test_the_next_holder_reads_on_from_the_offsets_handed_over(tmp_path: Path):
    log = tmp_path / "job.out"
    log.write_text("step 1\nstep 2\n")
    store, tracker, handover = OffsetStore(), watched(log), Handover({})
    assert read(store, tracker, log) == ["step 1", "step 2"]
    handover.cycle_ended({7: tracker}, store.state)
    with log.open("a") as f:
        f.write("step 3\n")
    assert [t.text for t in takeover(handover).read(str(log), 1 << 20).lines] == ["step 3"]


def test_a_partial_last_line_is_read_whole_by_the_next_holder(tmp_path: Path):
    log = tmp_path / "job.out"
    log.write_text("step 1\nstep 2 half")
    store, tracker, handover = OffsetStore(), watched(log), Handover({})
    read(store, tracker, log)
    handover.cycle_ended({7: tracker}, store.state)
    with log.open("a") as f:
        f.write(" done\n")
    assert [t.text for t in takeover(handover).read(str(log), 1 << 20).lines] == ["step 2 half done"]


def test_a_failure_not_yet_reported_is_read_again_by_the_next_holder(tmp_path: Path):
    log = tmp_path / "job.out"
    log.write_text("step 1\n")
    store, tracker, handover = OffsetStore(), watched(log), Handover({})
    read(store, tracker, log)
    handover.cycle_ended({7: tracker}, store.state)
    with log.open("a") as f:
        f.write(XID + "\n")
    read(store, tracker, log)  # the failure waits its settle second: not yet signalled
    handover.cycle_ended({7: tracker}, store.state)
    assert takeover(handover).read(str(log), 1 << 20).lines[0].text == XID  # the holder dies now: not lost

    assert tracker.anomaly_events(T0 + SETTLE)  # reported (signalled) in a later cycle...
    handover.cycle_ended({7: tracker}, store.state)
    assert takeover(handover).read(str(log), 1 << 20).lines == []  # ...and then not charged again


def test_a_checkpoint_not_yet_sent_is_read_again_by_the_next_holder(tmp_path: Path):
    log = tmp_path / "job.out"
    log.write_text("")
    store, tracker, handover = OffsetStore(), watched(log), Handover({})
    handover.cycle_ended({7: tracker}, store.state)
    log.write_text("LAZARUS step=10 loss=2.31 checkpoint=10\n")
    read(store, tracker, log)
    handover.cycle_ended({7: tracker}, store.state)
    assert len(takeover(handover).read(str(log), 1 << 20).lines) == 1
    assert tracker.digest_events(T0, tracker.digest_interval())  # the digest with the checkpoint goes out
    handover.cycle_ended({7: tracker}, store.state)
    assert takeover(handover).read(str(log), 1 << 20).lines == []


def test_renewals_carry_only_changes_never_sent_ones_first_and_a_bounded_number():
    handover = Handover({"/a": LogOffset(offset=1), "/b": LogOffset(offset=1)})
    state = restored_state({"/a": LogOffset(offset=5), "/b": LogOffset(offset=5), "/c": LogOffset(offset=5)})
    handover.cycle_ended({}, state)
    offsets, forget = handover.pending(limit=2)
    assert list(offsets) == ["/c", "/a"] and forget == []
    handover.acknowledged(offsets, forget)
    assert list(handover.pending(limit=2)[0]) == ["/b"]
    handover.acknowledged(*handover.pending())
    assert handover.pending() == ({}, [])


def test_files_of_jobs_no_longer_watched_are_forgotten(tmp_path: Path):
    handover = Handover({"/old/job.out": LogOffset(offset=9)})
    store = OffsetStore(restored_state({"/old/job.out": LogOffset(offset=9)}))
    log = tmp_path / "job.out"
    log.write_text("x\n")
    tracker = watched(log)
    read(store, tracker, log)
    for _ in range(UNCLAIMED_CYCLES - 1):
        assert handover.cycle_ended({7: tracker}, store.state) == []
    assert handover.cycle_ended({7: tracker}, store.state) == ["/old/job.out"]  # no tracker claimed it
    store.forget(["/old/job.out"])
    store.forget([str(log)])  # the job left Slurm: the loop forgot its file
    handover.cycle_ended({}, store.state)
    assert handover.pending() == ({}, ["/old/job.out"])
