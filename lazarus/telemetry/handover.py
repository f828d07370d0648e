"""The log offsets one telemetry term hands to the next, through the lease workflow.

A replica that takes over must neither lose an event nor read an earlier attempt's failure as new. It
therefore resumes each file from the last position whose lines have *all had their effect*: every event
they produced was signalled to the job's workflow. The loop reads a file (and moves its offset) before
it signals what the lines meant, and a failure line waits a settle second for its root cause, so the
position saved for a job is held back while its tracker still has something of those lines to report
(:func:`delivered`), and is taken only between cycles, never half-way through one.

Lines read again after a takeover (at most those since the last renewal) produce events the workflow
already has: it keeps one failure per attempt, progress as a maximum, attempt starts and ends once; the
event ids and workflow-side deduplication of at-least-once delivery drop the rest.

Offsets are saved at the start of a line (a partial last line is read again), so the saved form stays
small: :class:`~lazarus.models.lease.LogOffset`.
"""

from __future__ import annotations

from collections.abc import Mapping

from lazarus.detection.tail import FileTail, TailState
from lazarus.models.lease import MAX_OFFSETS_PER_RENEWAL, LogOffset
from lazarus.telemetry.tracker import JobTracker

# Saved offsets of files that no tracker of this term claimed within this many cycles belong to jobs no
# longer watched: they are forgotten (in the lease too).
UNCLAIMED_CYCLES = 30


def saved(tail: FileTail, owner: JobTracker | None = None) -> LogOffset:
    """The position to hand over, with the owning job's last progress as this term read it (its attempt, step and
    read time): the next term's hang clock starts there rather than at the attempt's first progress line, which
    it will never read (:meth:`lazarus.telemetry.tracker.JobTracker.resume_progress`). Saved at the start of its
    unfinished line (which the next reader reads again)."""
    cur = owner.attempt if owner is not None else None
    progress: dict[str, object] = {}  # none read yet: the next term's clock waits for a progress line
    if cur is not None and cur.last_progress_at is not None:
        progress = {"attempt": cur.index, "last_progress_at": cur.last_progress_at, "step": cur.step}
    if tail.skipping:  # the overlong line's start was returned: skip on to its end, as this reader would
        offset = LogOffset(
            inode=tail.inode, device=tail.device, offset=tail.offset, line_no=tail.line_no, skipping=True
        )
    else:
        offset = LogOffset(
            inode=tail.inode, device=tail.device, offset=tail.offset - len(tail.partial), line_no=tail.line_no
        )
    return offset.model_copy(update=progress) if progress else offset


def restored(offset: LogOffset) -> FileTail:
    return FileTail(
        inode=offset.inode, device=offset.device, offset=offset.offset, line_no=offset.line_no, skipping=offset.skipping
    )


def restored_state(offsets: Mapping[str, LogOffset]) -> TailState:
    return TailState(files={path: restored(o) for path, o in offsets.items()})


def delivered(tracker: JobTracker) -> bool:
    """Everything the lines read so far for this job meant has been signalled to its workflow: no failure
    waiting for its settle second, no checkpoint not yet sent in a digest."""
    cur = tracker.attempt
    if tracker.closed or cur is None:
        return True
    failure_pending = cur.first_failure_seen_at is not None and not cur.anomaly_reported
    checkpoint_pending = cur.checkpoint is not None and cur.checkpoint != cur.digest_checkpoint
    return not (failure_pending or checkpoint_pending)


class Handover:
    """The offsets to hand over: the latest delivered position of every file, and what the lease already has."""

    def __init__(self, granted: Mapping[str, LogOffset]) -> None:
        self.current: dict[str, LogOffset] = dict(granted)  # the latest delivered positions
        self.acked: dict[str, LogOffset] = dict(granted)  # what the lease holds; least recently sent first
        self._unclaimed = set(granted)
        self._cycles = 0

    def cycle_ended(self, trackers: Mapping[int, JobTracker], state: TailState) -> list[str]:
        """Take this cycle's delivered positions; returns the saved files no tracker claimed in time (the
        caller forgets them)."""
        owners = {path: t for t in trackers.values() for path in t.log_paths}
        current: dict[str, LogOffset] = {}
        for path, tail in state.files.items():
            owner = owners.get(path)
            if owner is None or delivered(owner):
                current[path] = saved(tail, owner)
            elif path in self.current:
                current[path] = self.current[path]  # held back until the tracker has reported those lines
        self.current = current
        self._cycles += 1
        self._unclaimed -= owners.keys()
        if self._cycles < UNCLAIMED_CYCLES or not self._unclaimed:
            return []
        gone, self._unclaimed = sorted(self._unclaimed & state.files.keys()), set()
        for path in gone:
            self.current.pop(path, None)
        return gone

    def pending(self, limit: int = MAX_OFFSETS_PER_RENEWAL) -> tuple[dict[str, LogOffset], list[str]]:
        """What the next renewal carries: changed positions (never sent ones first, then the least recently
        sent) and files to forget, each at most ``limit``."""
        order = {path: i for i, path in enumerate(self.acked)}
        changed = sorted((p for p, o in self.current.items() if self.acked.get(p) != o), key=lambda p: order.get(p, -1))
        forget = [p for p in self.acked if p not in self.current]
        return {p: self.current[p] for p in changed[:limit]}, forget[:limit]

    def acknowledged(self, offsets: Mapping[str, LogOffset], forget: list[str]) -> None:
        """The lease now holds ``offsets`` and dropped ``forget``."""
        for path in [*forget, *offsets]:
            self.acked.pop(path, None)
        self.acked.update(offsets)


def progress_marks(granted: Mapping[str, LogOffset]) -> dict[str, LogOffset]:
    """The granted offsets that carry their job's last progress (the term before read one)."""
    return {path: offset for path, offset in granted.items() if offset.last_progress_at is not None}
