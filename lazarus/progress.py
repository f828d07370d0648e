"""Report training progress to Lazarus from a training script.

Import cost is one standard-library module, so it is safe in any training
script::

    from lazarus.progress import report, checkpoint_started

    report(step=1200, loss=2.31, samples_per_s=5120, total_steps=50000)  # every N steps
    checkpoint_started(step=1200)                          # before a long save
    report(step=1200, checkpoint=1200)                     # after the save finished

Each call prints one line such as
``LAZARUS step=1200 loss=2.31 samples_per_s=5120 checkpoint=1200`` to stdout and
flushes it at once, so that Lazarus sees progress even when stdout is a file
(Slurm output) with block buffering. Lazarus uses these lines to learn the
job's hang budget and its newest checkpoint; ``total_steps`` (the steps training
will run) tells it when training is done, so a job that printed its last step
and is shutting down is not taken for hung. Print from one rank (rank 0) or
from all; a ``rank=`` field is added when ``rank`` is given.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # keep the import cost of this module near zero
    from typing import TextIO

__all__ = ["checkpoint_started", "format_line", "report"]


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value)
    if not text or any(c.isspace() for c in text) or "=" in text:
        raise ValueError(f"progress value {text!r} must be non-empty without spaces or '='")
    return text


def format_line(**fields: object) -> str:
    """The Lazarus progress line for ``fields`` (None values are left out)."""
    parts = [f"{key}={_value(value)}" for key, value in fields.items() if value is not None]
    if not parts:
        raise ValueError("a progress line needs at least one field")
    return "LAZARUS " + " ".join(parts)


def report(
    step: int,
    loss: float | None = None,
    samples_per_s: float | None = None,
    checkpoint: int | None = None,
    *,
    total_steps: int | None = None,
    rank: int | None = None,
    stream: TextIO | None = None,
    **extra: object,
) -> None:
    """Print and flush one progress line. ``checkpoint`` is the step of a checkpoint that is now complete;
    ``total_steps`` the steps training will run (declare it: a job at its last step is ending, not hung)."""
    out = stream or sys.stdout
    fields = {"step": step, "total_steps": total_steps, "loss": loss, "samples_per_s": samples_per_s}
    out.write(format_line(**fields, checkpoint=checkpoint, rank=rank, **extra) + "\n")
    out.flush()


def checkpoint_started(step: int, *, rank: int | None = None, stream: TextIO | None = None) -> None:
    """Announce that a checkpoint save begins, so a long silence is not taken for a hang."""
    out = stream or sys.stdout
    out.write(format_line(phase="checkpoint", step=step, rank=rank) + "\n")
    out.flush()
