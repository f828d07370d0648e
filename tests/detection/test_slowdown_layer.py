"""A log whose own progress reports slow down and stay slow is a straggler of unknown cause; a single slow report
(an evaluation, a checkpoint, a warm-up step), a modest slowdown, or a slowdown next to a failure is not."""

from __future__ import annotations

import pytest

from lazarus.detection.slowdown import FACTOR, slowed_down
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text


def _diagnose(tmp_path, lines: list[str]):
    return diagnose_text(tmp_path, "\n".join(lines) + "\n")


@pytest.mark.parametrize(
    "lines",
    [
        [f"2024-05-01 12:00:{i:02d},000: Iteration took {t} s." for i, t in enumerate([30.2, 31.0, 29.8, 95.1, 97.4])],
        [
            f"Epoch 1:  {i}%| {i}/377 [01:00<29:02, {t}s/it, loss=2.4]"
            for i, t in enumerate([1.1, 1.2, 1.1, 1.2, 4.1, 4.3])
        ],
        [
            f"Epoch[3] Batch [{20 * i}]\tSpeed: {r} samples/sec\tacc=0.6"
            for i, r in enumerate([90.3, 89.8, 91.0, 21.2, 19.9])
        ],
    ],
    ids=["took-seconds", "tqdm-seconds-per-it", "samples-per-second"],
)
def test_progress_reports_that_became_several_times_slower_and_stayed_so_are_a_straggler(tmp_path, lines):
    result = _diagnose(tmp_path, lines)
    assert (result.failure_kind, result.category, result.signature) == (
        FailureKind.STRAGGLER,
        Category.UNKNOWN,
        "progress_slowdown",
    )
    assert result.retry_advice is RetryAdvice.RETRY_SAME_NODES and result.implicated_nodes == []


@pytest.mark.parametrize(
    "times",
    [
        [30.0, 31.0, 30.5, 240.0, 30.2, 30.9],  # one checkpoint or evaluation, then back to speed
        [95.0, 31.0, 30.5, 30.2, 30.9],  # a slow first (warm-up) report
        [30.0, 31.0, 30.5, 60.1, 61.0, 62.3],  # twice as slow: a longer sequence length, a busier file system
        [30.0, 31.0, 30.5, 180.0],  # only the last report is slow
        [30.0, 95.0, 97.0],  # too little history to call anything steady
    ],
)
def test_a_single_slow_report_or_a_modest_slowdown_is_not_a_straggler(tmp_path, times):
    lines = [f"epoch {i}: This epoch took {t} s" for i, t in enumerate(times)]
    assert _diagnose(tmp_path, lines).failure_kind is FailureKind.NONE


def test_a_failure_in_the_log_wins_over_a_slowdown(tmp_path):
    lines = [f"Iteration took {t} s." for t in [30.2, 31.0, 29.8, 95.1, 97.4]]
    lines.append("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert _diagnose(tmp_path, lines).failure_kind is FailureKind.CRASH


@pytest.mark.parametrize("jitter", [0.0, 0.1])
def test_one_slow_report_printed_by_every_rank_is_still_one_report(tmp_path, jitter):
    times = [30.2, 31.0, 29.8, 180.4]
    lines = [f"[rank{r}]: Iteration took {t + r * jitter:.2f} s." for t in times for r in range(4)]
    assert _diagnose(tmp_path, lines).failure_kind is FailureKind.NONE


def test_ranks_that_all_slowed_down_are_a_straggler(tmp_path):
    times = [30.2, 31.0, 29.8, 180.4, 179.9]
    lines = [f"{r}: Iteration took {t + r * 0.1:.2f} s." for t in times for r in range(4)]
    assert _diagnose(tmp_path, lines).failure_kind is FailureKind.STRAGGLER


def test_the_slowdown_is_measured_against_the_steady_reports_before_it():
    assert slowed_down([1.0, 1.0, 1.0]) is None
    steady, slow = slowed_down([1.0, 1.1, 0.9, FACTOR * 1.0, FACTOR * 1.2]) or (0.0, 0.0)
    assert steady == 1.0 and slow >= FACTOR
