"""A steady telemetry cycle at 10,000 watched jobs (issue 11): its cost per job is a ``stat``, not a read.

- Keeping one file's new offset costs the same however many files are watched (no copy of every other offset).
- A cycle reads only the files that grew since the last read, all of them in one hop to a reader thread, not
  one hop per file; what a grown file adds reaches its job's tracker once.
- That one hop is still bounded: a file that blocks (NFS, FUSE) costs the cycle one timeout, the files read before
  it count, and the files after it are read on their own; the blocked file is not read again until it returns.

The scheduler is the simulated controller (real adapter and parsers); Temporal is a fake (tests/telemetry).
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from lazarus.detection.tail import FileTail
from lazarus.telemetry.logreads import BoundedReads
from lazarus.telemetry.offsets import OffsetStore
from lazarus.telemetry.tracker import JobTracker
from tests.telemetry.test_discovery_scales import FakeTemporal, loop_over


def _kept(store: OffsetStore, files: int, commits: int) -> float:
    """Seconds to keep ``commits`` new offsets in a store already holding ``files``."""
    store.state.files.update({f"/logs/job-{i}.out": FileTail(inode=i, device=1, offset=10) for i in range(files)})
    started = time.perf_counter()
    for i in range(commits):
        store.commit(f"/logs/job-{i}.out", FileTail(inode=i, device=1, offset=20))
    return time.perf_counter() - started


def test_keeping_one_files_offset_costs_the_same_however_many_files_are_watched() -> None:
    small = min(_kept(OffsetStore(None), 100, 100) for _ in range(3))
    large = min(_kept(OffsetStore(None), 20_000, 100) for _ in range(3))
    assert large < 10 * small + 0.005, f"100 commits: {small:.4f} s with 100 files, {large:.4f} s with 20,000"


class CountedHops:
    """Counts what the loop hands to its reader threads."""

    def __init__(self, reads: BoundedReads) -> None:
        self.hops = 0
        self._submit = reads._pool.submit
        reads._pool.submit = self.submit  # type: ignore[method-assign]

    def submit(self, fn: Any, *args: Any) -> Future[Any]:
        self.hops += 1
        return self._submit(fn, *args)


def _progress(tracker: JobTracker) -> int | None:
    return tracker.attempt.step if tracker.attempt else None


@pytest.mark.asyncio
async def test_a_steady_cycle_reads_only_the_files_that_grew_in_one_thread_hop(tmp_path: Path) -> None:
    loop = loop_over(tmp_path, 40, FakeTemporal())
    await loop.cycle()  # discovery, first reads
    await loop.cycle()
    grown = sorted(loop.trackers)[:3]
    for job_id in grown:
        path = loop.trackers[job_id].log_paths[0]
        with open(path, "a") as log:
            log.write("LAZARUS step=7 loss=0.5\n")
    hops = CountedHops(loop.reads)
    await loop.cycle()
    assert hops.hops == 1, f"{hops.hops} hops to reader threads for 40 jobs, 3 of whose logs grew"
    assert [_progress(loop.trackers[j]) for j in grown] == [7, 7, 7]
    await loop.cycle()
    assert hops.hops == 2
    assert [_progress(loop.trackers[j]) for j in grown] == [7, 7, 7]


@pytest.mark.asyncio
async def test_a_file_that_blocks_costs_one_timeout_and_the_others_are_still_read() -> None:
    reads = BoundedReads(timeout=0.3)
    release = threading.Event()

    def read(name: str) -> str:
        if name == "stuck":
            release.wait(10)
        return name

    try:
        keys = ["a", "b", "stuck", "c"]
        started = time.monotonic()
        done = await reads.run_each({key: (lambda k=key: read(k)) for key in keys})
        assert time.monotonic() - started < 1.0
        assert done == {"a": "a", "b": "b"}  # read before it; "c" is left to be read on its own
        assert reads.stuck() == ["stuck"]
        again = await reads.run_each({key: (lambda k=key: read(k)) for key in keys})
        assert again == {"a": "a", "b": "b", "c": "c"}  # the blocked file is not read again until it returns
    finally:
        release.set()
        await asyncio.sleep(0.05)
        reads.close()
    assert reads.stuck() == []
