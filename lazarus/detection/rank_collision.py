"""What a finished file says when two processes announce the same global rank and some rank never appears.

Lightning (and NeMo, Fabric on it) has every process announce its place in the
job before the process group forms: ``Initializing distributed: GLOBAL_RANK: 1,
MEMBER: 2/8``. When the launcher's task layout does not match the trainer's
(``srun`` started without ``--ntasks-per-node``, ``num_nodes`` not passed, a
node-rank variable missing), the processes of every node compute the same ranks:
the same rank is announced twice and the ranks above them never are. The process
group then waits for ranks that will never come, or fails to form.

The rule is structural: in a file's first :data:`HEAD_BYTES` (the announcements
come before any training step), some global rank announced two or more times
while at least one rank below the announced world size is never announced, and
no progress line after the last announcement. A log of a job restarted in the
same file announces every rank again (no rank missing), and a job whose ranks
did form goes on to print training steps; neither is read this way. Only a log
with no failure finding is read (any crash or hang wins). The answer is a hang
of the application's launch configuration (the decision table stops: a retry
computes the same ranks).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from lazarus.detection.advice_table import advise
from lazarus.detection.calibration import calibrate
from lazarus.detection.slowdown import training_progress
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind

HEAD_BYTES = 64 * 1024
SIGNATURE = "global_rank_collision"
RAW_CONFIDENCE = 0.5

_ANNOUNCEMENT = re.compile(r"GLOBAL_RANK: (\d+), MEMBER: \d+/(\d+)\b")


def read_head(path: Path, size: int = HEAD_BYTES) -> list[str]:
    """The lines of the first ``size`` bytes of ``path`` (a cut last line is dropped)."""
    with path.open("rb") as handle:
        data = handle.read(size + 1)
    lines = data[:size].decode("utf-8", errors="replace").splitlines()
    if len(data) > size and lines:
        lines.pop()
    return lines


def collision(lines: list[str]) -> tuple[list[int], list[int]] | None:
    """(ranks announced twice or more, ranks never announced) when the announcements collide, else None."""
    seen: Counter[int] = Counter()
    world = 0
    last = -1
    for index, line in enumerate(lines):
        if (found := _ANNOUNCEMENT.search(line)) is not None:
            seen[int(found.group(1))] += 1
            world = max(world, int(found.group(2)))
            last = index
    if last < 0 or any(training_progress(line) for line in lines[last + 1 :]):
        return None
    twice = sorted(rank for rank, count in seen.items() if count >= 2)
    missing = [rank for rank in range(world) if rank not in seen]
    if not twice or not missing:
        return None
    return twice, missing


def _ranks(ranks: list[int]) -> str:
    return ", ".join(str(r) for r in ranks[:8]) + (" ..." if len(ranks) > 8 else "")


def rank_collision_diagnosis(files: list[Path], found: Diagnosis) -> Diagnosis | None:
    """The answer for a file whose processes claimed the same global ranks (``found`` found no failure)."""
    for path in files:
        try:
            result = collision(read_head(path))
        except OSError:
            continue
        if result is None:
            continue
        twice, missing = result
        category = Category.APPLICATION
        return found.model_copy(
            update={
                "failure_kind": FailureKind.HANG,
                "category": category,
                "signature": SIGNATURE,
                "retry_advice": advise(FailureKind.HANG, category, node_evidence=False),
                "confidence": calibrate(RAW_CONFIDENCE),
                "explanation": f"Processes announced the same global rank(s) {_ranks(twice)} in {path.name} while "
                f"rank(s) {_ranks(missing)} never appeared: the launcher's task layout does not match the "
                "trainer's nodes and devices, so the process group waits for ranks that never come. Fix the "
                "launch (tasks per node, number of nodes, node rank); a retry as is computes the same ranks.",
            }
        )
    return None
