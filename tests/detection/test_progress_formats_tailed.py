"""Every progress format users have is seen while its epoch is still running.

Each case writes a framework's progress output into a growing file the way the
framework does (real tqdm bars that redraw with ``\\r``; Megatron and DeepSpeed
log lines), tails it with :func:`read_new_lines` after each burst of steps,
and asserts that :func:`parse_progress` sees the newest step although no bar
has printed its end-of-epoch newline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

import pytest
from tqdm import tqdm

from lazarus.detection.progress_lines import parse_progress
from lazarus.detection.tail import TailState, read_new_lines

TOTAL = 1000
BURSTS = (3, 7, 12)  # steps written before each read; the epoch (TOTAL steps) never ends


def tqdm_bar(out: IO[str]) -> Callable[[int], None]:
    """A plain tqdm bar (also what Hugging Face Trainer draws), redrawn at every step."""
    bar = tqdm(total=TOTAL, file=out, mininterval=0, miniters=1)
    return lambda step: bar.update(1)


def lightning_bar(out: IO[str]) -> Callable[[int], None]:
    """Lightning's bar: ``Epoch 0:`` before it, the logged loss in its postfix."""
    bar = tqdm(total=TOTAL, desc="Epoch 0", file=out, mininterval=0, miniters=1)

    def step(n: int) -> None:
        bar.set_postfix(v_num=0, train_loss=f"{2.5 - n / 100:.3f}", refresh=False)
        bar.update(1)

    return step


def hf_trainer(out: IO[str]) -> Callable[[int], None]:
    """Hugging Face Trainer: a tqdm bar, and the logged metrics written above it (``tqdm.write``)."""
    bar = tqdm(total=TOTAL, file=out, mininterval=0, miniters=1)

    def step(n: int) -> None:
        bar.update(1)
        if n % 2 == 0:
            tqdm.write(str({"loss": 2.5 - n / 100, "learning_rate": 5e-05, "epoch": round(n / TOTAL, 4)}), file=out)

    return step


def megatron(out: IO[str]) -> Callable[[int], None]:
    def step(n: int) -> None:
        out.write(
            f" [2024-05-01 12:00:{n % 60:02d}] iteration {n:>8}/{TOTAL:>8} | consumed samples: {n * 256:>10} | "
            f"elapsed time per iteration (ms): 250.1 | learning rate: 1.0E-04 | global batch size:   256 | "
            f"lm loss: {2.5 - n / 100:.6E} | loss scale: 1.0 | number of skipped iterations:   0 |\n"
        )

    return step


def deepspeed(out: IO[str]) -> Callable[[int], None]:
    def step(n: int) -> None:
        out.write(
            f"[2024-05-01 12:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step={n}, skipped=0, "
            f"lr=[0.0001], mom=[(0.9, 0.999)]\n"
        )

    return step


@pytest.mark.parametrize("writer", [tqdm_bar, lightning_bar, hf_trainer, megatron, deepspeed], ids=lambda w: w.__name__)
def test_the_newest_step_is_seen_before_the_epoch_ends(tmp_path, writer):
    path = tmp_path / "train.out"
    state, step, parsed = TailState(), 0, []
    with open(path, "w", encoding="utf-8") as out:
        advance = writer(out)
        for burst in BURSTS:
            for _ in range(burst):
                step += 1
                advance(step)
            out.flush()
            lines, state, notes = read_new_lines(path, state)
            assert notes == []
            samples = [s for s in (parse_progress(text) for _, text in lines) if s is not None]
            parsed += samples
            assert max((s.step for s in samples if s.step is not None), default=None) == step
    if writer in (tqdm_bar, lightning_bar, hf_trainer):
        assert not path.read_text().endswith("\n")  # the bar never printed its end-of-epoch newline
    if writer is hf_trainer:
        assert any(s.source == "hf" and s.loss is not None and s.epoch for s in parsed)
    if writer is lightning_bar:
        assert all(s.source == "lightning" and s.epoch == 0 for s in parsed)
        assert parsed[-1].loss == pytest.approx(2.5 - step / 100)
