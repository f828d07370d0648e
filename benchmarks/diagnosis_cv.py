"""Grouped k-fold cross-validation by source for the data-driven parts of diagnosis.

Every excerpt of one source (its normalised ``source_url``) falls in the same
fold, so a thread never helps to score itself. Folds are deterministic: the
sources are ordered by the sha256 of their URL and dealt round-robin. For each
fold the learned fallback (``benchmarks/token_fallback.py``, an experiment) is trained on the
other folds and the held-out fold is diagnosed twice, by the rules alone and by
the rules with that fold's model; the confidence calibration is refitted on the
other folds' rule verdicts and applied to the held-out ones. The pooled
held-out predictions are scored like any split.

The rules themselves are not fitted per fold (they were written by reading
the same excerpts), so the "rules alone" figure is not an unbiased estimate of
the rules on new sources; what the CV measures honestly is what the learned
parts add on sources they never saw.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from token_fallback import TokenModel, train


def label_of(expect: dict[str, Any]) -> str:
    """The fallback's training label for an excerpt: ``kind/category``."""
    return f"{expect['failure_kind']}/{expect['category']}"


def folds(examples: list[Any], k: int) -> list[list[Any]]:
    """``k`` folds, whole sources each, dealt round-robin in sha256 order of the source URL."""
    sources = sorted({e.source for e in examples}, key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    fold_of = {source: i % k for i, source in enumerate(sources)}
    out: list[list[Any]] = [[] for _ in range(k)]
    for example in examples:
        out[fold_of[example.source]].append(example)
    return out


def train_on(examples: list[Any], **thresholds: float) -> TokenModel:
    """The fallback trained on the excerpts' text."""
    model = train(("\n".join(text for _, text in e.files), label_of(e.expect)) for e in examples)
    return model.model_copy(update=thresholds)


def cross_validate(
    examples: list[Any],
    k: int,
    run: Callable[..., list[Any]],
    **thresholds: float,
) -> dict[str, list[Any]]:
    """Held-out outcomes pooled over the folds: ``rules`` (no fallback) and ``rules+fallback``."""
    pooled: dict[str, list[Any]] = {"rules": [], "rules+fallback": []}
    for i, held_out in enumerate(folds(examples, k)):
        training = [e for j, fold in enumerate(folds(examples, k)) if j != i for e in fold]
        model = train_on(training, **thresholds)
        pooled["rules"] += run(held_out)
        pooled["rules+fallback"] += run(held_out, model=model)
    return pooled


BIN_LOWERS = (0.0, 0.3, 0.6, 0.7, 0.8, 0.9)


def fit_steps(scored: list[tuple[float, bool]], cap: float = 0.97) -> list[tuple[float, float, int]]:
    """Calibration steps ``(lower raw score, share right, n)`` from ``(raw score, advice right)`` pairs.

    The raw scores are binned at :data:`BIN_LOWERS`; adjacent bins that break monotonicity are pooled
    (pool-adjacent-violators); empty bins take their neighbour's value; no share exceeds ``cap``.
    """
    bins = [[lower, 0, 0] for lower in BIN_LOWERS]
    for raw, right in scored:
        index = max(i for i, lower in enumerate(BIN_LOWERS) if raw >= lower)
        bins[index][1] += right
        bins[index][2] += 1
    blocks = [[b[1], b[2], [i]] for i, b in enumerate(bins) if b[2]]
    merged: list[list[Any]] = []
    for block in blocks:
        merged.append(block)
        while len(merged) > 1 and merged[-2][0] / merged[-2][1] > merged[-1][0] / merged[-1][1]:
            right, n, members = merged.pop()
            merged[-1][0] += right
            merged[-1][1] += n
            merged[-1][2] += members
    share = {i: min(cap, round(r / n, 2)) for r, n, members in merged for i in members}
    steps, last = [], min(share.values()) if share else 0.5
    for i, (lower, _, n) in enumerate(bins):
        last = share.get(i, last)
        steps.append((lower, last, n))
    return steps


def apply_steps(steps: list[tuple[float, float, int]], raw: float) -> float:
    """The calibrated value of a raw score under ``steps``."""
    value = steps[0][1]
    for lower, calibrated, _ in steps:
        if raw >= lower:
            value = calibrated
    return value


def calibration_error(pairs: list[tuple[float, bool]]) -> float:
    """Expected calibration error: |mean confidence - share right| per distinct confidence, weighted by count."""
    groups: dict[float, list[bool]] = {}
    for confidence, right in pairs:
        groups.setdefault(confidence, []).append(right)
    total = sum(len(v) for v in groups.values())
    return round(sum(abs(c - sum(v) / len(v)) * len(v) for c, v in groups.items()) / total, 3) if total else 0.0
