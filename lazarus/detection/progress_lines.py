"""Progress lines from common training frameworks → typed :class:`ProgressSample`.

Recognised (one regex family each, tried cheapest first):

- Lazarus: ``LAZARUS step=1200 loss=2.31 samples_per_s=5120 checkpoint=1200``
  (``phase=checkpoint`` marks the start of a checkpoint save); see
  :mod:`lazarus.progress` for the helper that prints it.
- Megatron-LM: ``iteration  100/ 10000 | ... elapsed time per iteration (ms): ...
  | global batch size: ... | lm loss: ...``, ``saving checkpoint at iteration N``,
  ``successfully saved checkpoint from iteration N``.
- Hugging Face Trainer: ``{'loss': 2.3, 'learning_rate': ..., 'epoch': 0.4}``,
  ``Saving model checkpoint to .../checkpoint-500``, ``global_step=500``.
- tqdm progress bars (HF and Lightning ``Epoch 0: 45%|...| 450/1000 [..., 5.4it/s, loss=2.31]``);
  carriage-return updates keep only the last one.
- DeepSpeed: ``[Rank 0] step=100, skipped=0, lr=[...]``,
  ``global_step=100, RunningAvgSamplesPerSec=250.5``, ``Saving model checkpoint: .../global_step100/...``.
- NVRx: the fault-tolerance launcher's checkpoint-iteration file (``--ft-checkpoint-iteration-file``)
  holds the iteration of the newest checkpoint; :func:`nvrx_iteration_sample` reads it.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from lazarus.detection.locate import RANK_TAG, SRUN_LABEL


class ProgressEvent(StrEnum):
    STEP = "step"  # training advanced
    CHECKPOINT_START = "checkpoint_start"  # a checkpoint save began (expect a longer silence)
    CHECKPOINT_SAVED = "checkpoint_saved"  # a checkpoint at checkpoint_step is complete


class ProgressSample(BaseModel):
    """One progress observation. Fields a framework does not print are None."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="lazarus, megatron, hf, tqdm, lightning, deepspeed or nvrx")
    event: ProgressEvent = ProgressEvent.STEP
    step: int | None = None
    total_steps: int | None = None
    loss: float | None = None
    samples_per_s: float | None = None
    step_time_s: float | None = None
    checkpoint_step: int | None = None
    epoch: float | None = None
    rank: int | None = None


_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|NaN|inf|-inf)"


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    value = _float(text)
    return int(value) if value is not None and math.isfinite(value) and value >= 0 else None


# --- Lazarus -------------------------------------------------------------------
_LAZARUS = re.compile(r"\bLAZARUS((?:\s+\w+=\S+)+)")
_KV = re.compile(r"(\w+)=(\S+)")


def _lazarus(line: str) -> ProgressSample | None:
    found = _LAZARUS.search(line)
    if not found:
        return None
    kv = dict(_KV.findall(found.group(1)))
    checkpoint = _int(kv.get("checkpoint"))
    event = ProgressEvent.STEP
    if kv.get("phase") == "checkpoint":
        event = ProgressEvent.CHECKPOINT_START
    elif checkpoint is not None and "loss" not in kv and "samples_per_s" not in kv:
        event = ProgressEvent.CHECKPOINT_SAVED
    return ProgressSample(
        source="lazarus",
        event=event,
        step=_int(kv.get("step")),
        total_steps=_int(kv.get("total_steps")),
        loss=_float(kv.get("loss")),
        samples_per_s=_float(kv.get("samples_per_s")),
        step_time_s=_float(kv.get("step_time_s")),
        checkpoint_step=checkpoint,
        epoch=_float(kv.get("epoch")),
        rank=_int(kv.get("rank")),
    )


# --- Megatron ------------------------------------------------------------------
_MEG_ITER = re.compile(r"\biteration\s+(\d+)\s*/\s*(\d+)\s*\|")
_MEG_MS = re.compile(r"elapsed time per iteration \(ms\):\s*(" + _NUM + ")")
_MEG_GBS = re.compile(r"global batch size:\s*(\d+)")
_MEG_LOSS = re.compile(r"\blm loss:\s*(" + _NUM + ")")
_MEG_SAVE = re.compile(r"saving checkpoint at iteration\s+(\d+)")
_MEG_SAVED = re.compile(r"successfully saved checkpoint (?:from|at) iteration\s+(\d+)")


def _megatron(line: str) -> ProgressSample | None:
    if found := _MEG_SAVED.search(line):
        step = int(found.group(1))
        return ProgressSample(source="megatron", event=ProgressEvent.CHECKPOINT_SAVED, step=step, checkpoint_step=step)
    if found := _MEG_SAVE.search(line):
        return ProgressSample(source="megatron", event=ProgressEvent.CHECKPOINT_START, step=int(found.group(1)))
    found = _MEG_ITER.search(line)
    if not found:
        return None
    ms = _float(m.group(1)) if (m := _MEG_MS.search(line)) else None
    gbs = _int(m.group(1)) if (m := _MEG_GBS.search(line)) else None
    step_time = ms / 1000.0 if ms else None
    return ProgressSample(
        source="megatron",
        step=int(found.group(1)),
        total_steps=int(found.group(2)),
        loss=_float(m.group(1)) if (m := _MEG_LOSS.search(line)) else None,
        step_time_s=step_time,
        samples_per_s=gbs / step_time if gbs and step_time else None,
    )


# --- Hugging Face Trainer ----------------------------------------------------------
_HF_LOSS = re.compile(r"['\"]loss['\"]:\s*(" + _NUM + ")")
_HF_EPOCH = re.compile(r"['\"]epoch['\"]:\s*(" + _NUM + ")")
_HF_STEP = re.compile(r"['\"](?:step|global_step)['\"]:\s*(\d+)|\bglobal_step=(\d+)")
_HF_SPS = re.compile(r"['\"]train_samples_per_second['\"]:\s*(" + _NUM + ")")
_HF_SAVE = re.compile(r"Saving model checkpoint to \S*?checkpoint-(\d+)")


def _hf(line: str) -> ProgressSample | None:
    if found := _HF_SAVE.search(line):
        saved = int(found.group(1))
        return ProgressSample(source="hf", event=ProgressEvent.CHECKPOINT_SAVED, step=saved, checkpoint_step=saved)
    loss, epoch, step = _HF_LOSS.search(line), _HF_EPOCH.search(line), _HF_STEP.search(line)
    if not (epoch or (step and "global_step=" in line)):
        return None
    return ProgressSample(
        source="hf",
        loss=_float(loss.group(1)) if loss else None,
        epoch=_float(epoch.group(1)) if epoch else None,
        step=_int(step.group(1) or step.group(2)) if step else None,
        samples_per_s=_float(m.group(1)) if (m := _HF_SPS.search(line)) else None,
    )


# --- tqdm bars (HF, Lightning) -------------------------------------------------------
_TQDM = re.compile(
    r"(?:Epoch (\d+):\s*)?\d+%\|[^|]*\|\s*(\d+)/(\d+)\s*\[[^\]]*?(?:(" + _NUM + r")it/s|(" + _NUM + r")s/it)([^\]]*)\]"
)
_POSTFIX_LOSS = re.compile(r"\b(?:train_)?loss(?:_step)?=(" + _NUM + ")")


def _tqdm(line: str) -> ProgressSample | None:
    found = _TQDM.search(line.rsplit("\r", 1)[-1])
    if not found:
        return None
    rate = _float(found.group(4))
    seconds_per_it = _float(found.group(5))
    step_time = 1.0 / rate if rate else seconds_per_it
    loss = _POSTFIX_LOSS.search(found.group(6) or "")
    return ProgressSample(
        source="lightning" if found.group(1) is not None else "tqdm",
        step=int(found.group(2)),
        total_steps=int(found.group(3)),
        step_time_s=step_time,
        epoch=_float(found.group(1)),
        loss=_float(loss.group(1)) if loss else None,
    )


# --- DeepSpeed -------------------------------------------------------------------
_DS_STEP = re.compile(r"\[Rank (\d+)\] step=(\d+), skipped=(\d+)")
_DS_SPS = re.compile(r"global_step=(\d+), RunningAvgSamplesPerSec=(" + _NUM + ")")
_DS_SAVE = re.compile(r"Saving model checkpoint: \S*?global_step(\d+)")
_DS_SAVED = re.compile(r"[Cc]heckpoint global_step(\d+) is (?:ready|saved)")


def _deepspeed(line: str) -> ProgressSample | None:
    if found := _DS_SAVED.search(line):
        step = int(found.group(1))
        return ProgressSample(source="deepspeed", event=ProgressEvent.CHECKPOINT_SAVED, step=step, checkpoint_step=step)
    if found := _DS_SAVE.search(line):
        return ProgressSample(source="deepspeed", event=ProgressEvent.CHECKPOINT_START, step=int(found.group(1)))
    if found := _DS_STEP.search(line):
        return ProgressSample(source="deepspeed", step=int(found.group(2)), rank=int(found.group(1)))
    if found := _DS_SPS.search(line):
        return ProgressSample(source="deepspeed", step=int(found.group(1)), samples_per_s=_float(found.group(2)))
    return None


# Cheap literal guards: a parser runs only when its marker occurs in the line.
_PARSERS = (
    ("LAZARUS", _lazarus),
    ("iteration", _megatron),
    ("global_step", _deepspeed),
    ("[Rank ", _deepspeed),
    ("Saving model checkpoint: ", _deepspeed),
    ("it/s", _tqdm),
    ("s/it", _tqdm),
    ("epoch", _hf),
    ("global_step", _hf),
    ("checkpoint-", _hf),
)


def _rank_of(line: str) -> int | None:
    found = SRUN_LABEL.match(line) or RANK_TAG.search(line)
    return int(found.group(1)) if found else None


def parse_progress(line: str) -> ProgressSample | None:
    """The progress sample in ``line``, or None when it is not a progress line."""
    for marker, parser in _PARSERS:
        if marker not in line:
            continue
        try:
            sample = parser(line)
        except ValueError:  # a number past int()'s 4300 digits: no training prints that as progress
            continue
        if sample is not None:
            if sample.rank is None:
                sample.rank = _rank_of(line)
            return sample
    return None


def nvrx_iteration_sample(file_text: str) -> ProgressSample | None:
    """Read NVRx's checkpoint-iteration file (one integer: the newest checkpoint's iteration)."""
    value = _int(file_text.strip().splitlines()[0] if file_text.strip() else None)
    if value is None or value < 0:
        return None
    return ProgressSample(source="nvrx", event=ProgressEvent.CHECKPOINT_SAVED, step=value, checkpoint_step=value)
