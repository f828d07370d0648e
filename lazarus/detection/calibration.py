"""Calibrated confidence: the raw score of a diagnosis mapped to how often such advice was right.

The verdict computes a raw score from the root signature's base confidence,
its repetitions and corroborating evidence. On the real corpus
(``tests/detection/real_corpus``: the dev split and the retired test split, all
of it tuning data since the third issue 9 pass) the raw scores are binned and
the share of diagnoses whose retry advice matched the label is measured per
bin; adjacent bins that break monotonicity are pooled (pool-adjacent-violators,
i.e. isotonic regression on bins). ``benchmarks/diagnosis_accuracy.py
--fit-calibration`` prints :data:`STEPS` (refitted 2026-12-01, seventh pass, on the whole pool: 1,190 excerpts after de-duplication), and
``--cv 5`` measures the calibration error of a table fitted on other sources.
A raw score at or above ``lower`` maps to ``calibrated``. The published
reliability table is in docs/benchmarks.md. ``Policy.min_confidence_to_act``
compares against this calibrated value.
"""

from __future__ import annotations

# (lower bound of the raw score, observed share of right retry advice on the real corpus), ascending.
STEPS: tuple[tuple[float, float], ...] = (
    (0.0, 0.71),  # n=39
    (0.3, 0.71),  # n=244
    (0.6, 0.82),  # n=282
    (0.7, 0.89),  # n=122
    (0.8, 0.97),  # n=91 (shares above 0.97 are capped: a few cases prove little)
    (0.9, 0.97),  # n=35
)


def calibrate(raw: float) -> float:
    """The calibrated confidence of a raw verdict score (monotone, in [0, 1])."""
    value = STEPS[0][1]
    for lower, calibrated in STEPS:
        if raw >= lower:
            value = calibrated
    return value
