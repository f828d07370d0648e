"""Calibrated confidence: the raw score of a diagnosis mapped to how often such advice was right.

The verdict computes a raw score from the root signature's base confidence,
its repetitions and corroborating evidence. On the dev split of the real corpus
(``tests/detection/real_corpus``, see ``benchmarks/diagnosis_accuracy.py
--reliability``) the raw scores were binned and the share of diagnoses whose
retry advice matched the label measured per bin; adjacent bins that broke
monotonicity were pooled (pool-adjacent-violators, i.e. isotonic regression on
bins), refitted after the issue 9 recognition work (2026-11-30). :data:`STEPS`
is that table: a raw score at or above ``lower`` maps to ``calibrated``. The published reliability table is in docs/benchmarks.md.
``Policy.min_confidence_to_act`` compares against this calibrated value.
"""

from __future__ import annotations

# (lower bound of the raw score, observed share of right retry advice on dev), ascending.
STEPS: tuple[tuple[float, float], ...] = (
    (0.0, 0.50),  # n=6
    (0.3, 0.71),  # n=62
    (0.6, 0.88),  # n=76
    (0.7, 0.93),  # n=28
    (0.8, 0.95),  # n=21
    (0.9, 0.97),  # n=9 (all right; capped below 1: nine cases prove little)
)


def calibrate(raw: float) -> float:
    """The calibrated confidence of a raw verdict score (monotone, in [0, 1])."""
    value = STEPS[0][1]
    for lower, calibrated in STEPS:
        if raw >= lower:
            value = calibrated
    return value
