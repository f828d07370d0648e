"""`lazarus.progress`: what a training script imports to report progress."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from lazarus.detection.progress_lines import ProgressEvent, parse_progress
from lazarus.progress import checkpoint_started, format_line, report


def test_report_prints_the_documented_line_that_lazarus_parses():
    out = io.StringIO()
    report(step=1200, loss=2.31, samples_per_s=5120, checkpoint=1200, stream=out)
    assert out.getvalue() == "LAZARUS step=1200 loss=2.31 samples_per_s=5120 checkpoint=1200\n"
    sample = parse_progress(out.getvalue())
    assert (sample.step, sample.loss, sample.samples_per_s, sample.checkpoint_step) == (1200, 2.31, 5120.0, 1200)


def test_checkpoint_started_is_parsed_as_the_start_of_a_save():
    out = io.StringIO()
    checkpoint_started(step=1300, rank=0, stream=out)
    assert parse_progress(out.getvalue()).event is ProgressEvent.CHECKPOINT_START


def test_values_with_spaces_are_refused():
    with pytest.raises(ValueError, match="without spaces"):
        format_line(step=1, tag="two words")


def test_each_line_is_flushed_at_once_even_to_a_pipe():
    code = "from lazarus.progress import report; import time; report(step=7); time.sleep(30)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "LAZARUS step=7\n"  # arrives while the process still runs
    finally:
        proc.kill()
        proc.wait()


def test_importing_the_helper_pulls_in_no_heavy_modules():
    code = (
        "import sys, lazarus.progress; print(sorted(m for m in ('pydantic', 'temporalio', 'yaml') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_report_declares_the_total_steps_so_lazarus_knows_when_training_is_done():
    out = io.StringIO()
    report(step=30, loss=0.16, checkpoint=30, total_steps=30, stream=out)
    assert out.getvalue() == "LAZARUS step=30 total_steps=30 loss=0.16 checkpoint=30\n"
    sample = parse_progress(out.getvalue())
    assert (sample.step, sample.total_steps, sample.checkpoint_step) == (30, 30, 30)
