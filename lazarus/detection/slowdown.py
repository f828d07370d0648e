"""What ``lazarus diagnose`` can soundly say about a log whose own progress reports slow down and stay slow.

A straggler (a GPU throttled by heat or power, a downtrained link, a busy
neighbour) shows in a training log only as its step time growing. A single slow
report is no straggler: an evaluation, a checkpoint save or a warm-up step is
slow too. The rule is structural: in the log's last :data:`TAIL_BYTES`, one
series of the same report (the same unit: seconds per step, samples per second,
"took N s") that was steady for at least :data:`MIN_BEFORE` reports and then
became at least :data:`FACTOR` times slower for every one of its last
:data:`MIN_AFTER` or more reports. Only a log with no failure finding is read
this way (any crash or hang wins), and the answer is a straggler of unknown
cause: the log does not say which node or why (the live straggler detector
compares ranks; DCGM's clock-event codes name a thermal or power cause and are
signatures).

It reads only the end of each file, so it adds nothing to the per-line scan.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from lazarus.detection.advice_table import advise
from lazarus.detection.calibration import calibrate
from lazarus.detection.locate import RANK_TAG, SRUN_LABEL
from lazarus.detection.progress_lines import parse_progress
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind

TAIL_BYTES = 64 * 1024
MIN_BEFORE = 3
MIN_AFTER = 2
FACTOR = 3.0
SLOWDOWN_SIGNATURE = "progress_slowdown"
RAW_CONFIDENCE = 0.4

_NUM = r"(\d+(?:\.\d+)?)"
# (series name, regex, True when the number is a rate: larger is faster)
_FORMS: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    ("took", re.compile(r"\btook\s+" + _NUM + r"\s*(?:s|sec|secs|seconds)?\b"), False),
    ("per_unit", re.compile(_NUM + r"\s*(?:s|sec|secs)\s*/\s*(?:it|iter|batch|step)\b"), False),
    (
        "rate",
        re.compile(_NUM + r"\s*(?:samples|examples|images|img|tokens|tok|tks|sequences|seqs)\s*/\s*(?:s|sec)\b"),
        True,
    ),
)


def step_reading(line: str) -> tuple[str, float] | None:
    """The line's step-time reading as (series, seconds per unit of work), or None."""
    sample = parse_progress(line)
    if sample is not None:
        if sample.step_time_s:
            return (f"{sample.source}_step_time", sample.step_time_s)
        if sample.samples_per_s:
            return (f"{sample.source}_rate", 1.0 / sample.samples_per_s)
    for name, form, is_rate in _FORMS:
        if (found := form.search(line)) is not None:
            value = float(found.group(1))
            if value <= 0:
                return None
            return (name, 1.0 / value if is_rate else value)
    return None


# A training counter or loss with its value: "step 100", "loss = 1.1, step = 488600", "iter 3010:", "Epoch 3/10".
_TRAINING_COUNTER = re.compile(r"(?i)\b(?:loss|step|iter|iteration|epoch)\b\s*[:=]?\s*\d")


def training_progress(line: str) -> bool:
    """The line reports training progress: a step-time reading, or a step, iteration, epoch or loss value."""
    return step_reading(line) is not None or _TRAINING_COUNTER.search(line) is not None


def _series(lines: list[str]) -> dict[str, list[float]]:
    """Readings per series (one per report form and rank), in order; a reading equal to the one before (the
    same line printed twice) once."""
    out: dict[str, list[float]] = {}
    for line in lines:
        reading = step_reading(line)
        if reading is None:
            continue
        rank = SRUN_LABEL.match(line) or RANK_TAG.search(line)
        key = f"{reading[0]} of rank {rank.group(1)}" if rank else reading[0]
        values = out.setdefault(key, [])
        if not values or values[-1] != reading[1]:
            values.append(reading[1])
    return out


def slowed_down(values: list[float]) -> tuple[float, float] | None:
    """(steady, slow) step time when ``values`` end in a lasting slowdown, else None."""
    for split in range(MIN_BEFORE, len(values) - MIN_AFTER + 1):
        steady = statistics.median(values[:split])
        after = values[split:]
        if steady > 0 and min(after) >= FACTOR * steady:
            return steady, statistics.median(after)
    return None


def read_tail(path: Path, size: int = TAIL_BYTES) -> list[str]:
    """The lines of the last ``size`` bytes of ``path`` (a line cut at the start is dropped)."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        total = handle.tell()
        handle.seek(max(0, total - size))
        text = handle.read(size).decode("utf-8", "replace")
    lines = text.splitlines()
    return lines[1:] if total > size else lines


def slowdown_note(path: Path) -> str | None:
    """A sentence naming the lasting slowdown at the end of ``path``, or None."""
    try:
        series = _series(read_tail(path))
    except OSError:
        return None
    for name, values in series.items():
        found = slowed_down(values)
        if found is not None:
            steady, slow = found
            return (
                f"{path.name}: the run's own progress reports ({name}) slowed from {steady:.4g} to {slow:.4g} "
                f"(at least {FACTOR:g} times slower for its last reports) and stayed slow"
            )
    return None


def slowdown_diagnosis(files: list[Path], found: Diagnosis) -> Diagnosis | None:
    """A straggler diagnosis when one of ``files`` ends in a lasting slowdown (``found`` found no failure)."""
    notes = [note for path in files if (note := slowdown_note(path)) is not None]
    if not notes:
        return None
    kind, category = FailureKind.STRAGGLER, Category.UNKNOWN
    return found.model_copy(
        update={
            "failure_kind": kind,
            "category": category,
            "signature": SLOWDOWN_SIGNATURE,
            "retry_advice": advise(kind, category, node_evidence=False),
            "confidence": calibrate(RAW_CONFIDENCE),
            "explanation": "The job slowed down and stayed slow (a straggler of unknown cause): "
            + "; ".join(notes)
            + ". The log names no node; the live straggler detector compares ranks.",
        }
    )
