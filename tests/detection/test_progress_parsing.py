"""Progress lines from each supported framework become typed samples; other lines do not."""

from __future__ import annotations

import pytest

from lazarus.detection.progress_lines import ProgressEvent, nvrx_iteration_sample, parse_progress

MEGATRON = (
    " [2024-05-01 12:00:00] iteration      100/   10000 | consumed samples:        12800 | elapsed time per "
    "iteration (ms): 1250.0 | learning rate: 3.000E-04 | global batch size:   128 | lm loss: 2.345678E+00 | "
    "loss scale: 1.0 |"
)


def test_lazarus_line():
    sample = parse_progress("LAZARUS step=1200 loss=2.31 samples_per_s=5120 checkpoint=1200")
    assert (sample.source, sample.step, sample.loss, sample.samples_per_s, sample.checkpoint_step) == (
        "lazarus",
        1200,
        2.31,
        5120.0,
        1200,
    )
    assert sample.event is ProgressEvent.STEP


def test_lazarus_checkpoint_phase_and_saved_lines():
    assert parse_progress("3: LAZARUS phase=checkpoint step=1300").event is ProgressEvent.CHECKPOINT_START
    saved = parse_progress("LAZARUS step=1300 checkpoint=1300")
    assert saved.event is ProgressEvent.CHECKPOINT_SAVED and saved.checkpoint_step == 1300


def test_megatron_iteration_line():
    sample = parse_progress("2: " + MEGATRON)
    assert (sample.source, sample.step, sample.total_steps, sample.rank) == ("megatron", 100, 10000, 2)
    assert sample.loss == pytest.approx(2.345678)
    assert sample.step_time_s == pytest.approx(1.25)
    assert sample.samples_per_s == pytest.approx(128 / 1.25)


def test_megatron_checkpoint_lines():
    assert parse_progress("saving checkpoint at iteration    1000 to /ckpt in torch format").event is (
        ProgressEvent.CHECKPOINT_START
    )
    saved = parse_progress("  successfully saved checkpoint from iteration    1000 to /ckpt")
    assert (saved.event, saved.checkpoint_step) == (ProgressEvent.CHECKPOINT_SAVED, 1000)


def test_hf_trainer_dict_and_checkpoint():
    sample = parse_progress("{'loss': 2.3456, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.12}")
    assert (sample.source, sample.loss, sample.epoch) == ("hf", 2.3456, 0.12)
    saved = parse_progress("Saving model checkpoint to out/checkpoint-500")
    assert (saved.event, saved.checkpoint_step) == (ProgressEvent.CHECKPOINT_SAVED, 500)
    assert parse_progress("TrainOutput(global_step=500, training_loss=2.1, metrics={})").step == 500


def test_lightning_and_tqdm_bars_keep_the_last_carriage_return_update():
    bar = "Epoch 0:  44%|████▍     | 440/1000 [01:21<01:41,  5.40it/s]\rEpoch 0:  45%|████▌     | 450/1000 [01:23<01:41,  5.41it/s, v_num=0, train_loss=2.31]"
    sample = parse_progress(bar)
    assert (sample.source, sample.step, sample.total_steps, sample.loss) == ("lightning", 450, 1000, 2.31)
    assert sample.step_time_s == pytest.approx(1 / 5.41)
    slow = parse_progress(" 5%|▌         | 50/1000 [02:30<47:30,  3.00s/it]")
    assert (slow.source, slow.step, slow.step_time_s) == ("tqdm", 50, 3.0)


def test_deepspeed_lines():
    step = parse_progress(
        "[2024-05-01 12:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=100, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]"
    )
    assert (step.source, step.step, step.rank) == ("deepspeed", 100, 0)
    rate = parse_progress(
        "[INFO] [timer.py:215:stop] epoch=0/micro_step=100/global_step=100, RunningAvgSamplesPerSec=250.5, CurrSamplesPerSec=251.2"
    )
    assert (rate.step, rate.samples_per_s) == (100, 250.5)
    save = parse_progress("[Rank 0] Saving model checkpoint: /ckpt/global_step100/mp_rank_00_model_states.pt")
    assert (save.event, save.step) == (ProgressEvent.CHECKPOINT_START, 100)


def test_nvrx_checkpoint_iteration_file():
    sample = nvrx_iteration_sample("4200\n")
    assert (sample.source, sample.event, sample.checkpoint_step) == ("nvrx", ProgressEvent.CHECKPOINT_SAVED, 4200)
    assert nvrx_iteration_sample("") is None
    assert nvrx_iteration_sample("garbage") is None


@pytest.mark.parametrize(
    "line",
    [
        "node1:4101:4150 [0] NCCL INFO Channel 00/32 :    0   1   2   3",
        "0:   log_interval .................................... 10",
        "validation loss at iteration 1000 | lm loss value: 2.11",
        "",
        "\x00\xff garbage",
    ],
)
def test_other_lines_are_not_progress(line):
    assert parse_progress(line) is None
