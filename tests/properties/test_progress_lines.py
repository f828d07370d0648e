"""Progress lines: any text a job prints gives a progress sample or None, never an exception,
and a parsed step is a non-negative integer that the line itself wrote.

Progress lines drive the hang watchdog: a crash here stops a job's telemetry,
and a step the line did not say (negative, invented) would move its clock.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from lazarus.detection.progress_lines import ProgressSample, nvrx_iteration_sample, parse_progress
from lazarus.progress import format_line
from tests.properties.strategies import HOSTILE_SNIPPETS, hostile_text

# Every framework's marker, so that random text reaches every parser.
MARKERS = (
    "LAZARUS step=",
    "LAZARUS phase=checkpoint step=",
    " checkpoint=",
    "iteration ",
    "/ ",
    " |",
    "global_step=",
    "[Rank 0] step=",
    ", skipped=0",
    "Saving model checkpoint: /c/global_step",
    "Saving model checkpoint to /c/checkpoint-",
    "'epoch': ",
    "'loss': ",
    "it/s",
    "s/it",
    "%|",
    "| ",
    "/",
    " [",
    "]",
    "Epoch 1: ",
    "saving checkpoint at iteration ",
    "successfully saved checkpoint from iteration ",
    "Checkpoint global_step",
    " is ready",
    "3: ",
    "[rank7] ",
)
numbers = st.one_of(
    st.integers(-10, 10**6).map(str),
    st.sampled_from(["1e3", "-0", "nan", "inf", "1.5", "9" * 5000, "١٢٣", "²", "00042", "1" * 30]),
)
progress_like = st.lists(
    st.one_of(st.sampled_from(MARKERS), numbers, st.sampled_from(HOSTILE_SNIPPETS), st.text(max_size=4)), max_size=14
).map("".join)
_NUMBER = re.compile(r"[-+]?\d+\.?\d*(?:[eE][-+]?\d+)?")


def numbers_written_in(line: str) -> set[int]:
    """Integer values of the numbers the line spells, as a whole (``1e3``) or as a run of digits
    (``global_step1e3`` names step 1): digits of any script, as Python reads them."""
    values = {int(run) for run in re.findall(r"\d+", line) if len(run) <= 4300}
    for token in _NUMBER.findall(line):
        try:
            value = float(token)
        except ValueError:
            continue
        if value == value and abs(value) != float("inf"):
            values.add(int(value))
    return values


def check(sample: ProgressSample | None, line: str) -> None:
    if sample is None:
        return
    for name in ("step", "total_steps", "checkpoint_step"):
        value = getattr(sample, name)
        if value is not None:
            assert isinstance(value, int) and value >= 0, (name, value)
            assert value in numbers_written_in(line), (name, value)


@given(st.one_of(progress_like, hostile_text))
@example("iteration " + "9" * 5000 + "/ 10 |")  # past Python's int-from-text limit
@example("LAZARUS step=-5")
@example("LAZARUS step=1e400 checkpoint=-1")
@example("  1%|x| 5/" + "9" * 5000 + " [00:01, 5.00it/s]")
@example("[Rank " + "1" * 5000 + "] step=1, skipped=0")
def test_any_line_gives_a_sample_or_none_and_steps_the_line_wrote(line):
    check(parse_progress(line), line)


@given(st.integers(0, 10**12), st.integers(0, 10**12), st.one_of(st.none(), st.integers(0, 4096)))
def test_a_lazarus_line_parses_back_to_its_step_and_checkpoint(step, checkpoint, rank):
    sample = parse_progress(format_line(step=step, checkpoint=checkpoint, rank=rank))
    assert sample is not None and (sample.step, sample.checkpoint_step, sample.rank) == (step, checkpoint, rank)


@given(st.one_of(numbers, hostile_text))
@example("9" * 5000)
def test_an_nvrx_iteration_file_gives_a_non_negative_checkpoint_or_none(text):
    sample = nvrx_iteration_sample(text)
    assert sample is None or (sample.checkpoint_step is not None and sample.checkpoint_step >= 0)
