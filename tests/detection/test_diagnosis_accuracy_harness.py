"""The accuracy report (benchmarks/diagnosis_accuracy.py) runs end to end on a small slice, so it cannot rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_accuracy_report_runs_on_a_slice_of_each_set():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "diagnosis_accuracy.py"),
            "--split",
            "all",
            "--limit",
            "5",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    reports = json.loads(out.stdout)
    assert set(reports) == {"dev", "test", "self"}
    for report in reports.values():
        assert report["examples"] == 5
        assert set(report["accuracy"]) == {"retry_advice", "failure_kind", "category"}
        assert 0.0 <= report["node_precision"] <= 1.0
        assert report["per_class_recall"] and report["reliability"]


def test_the_split_manifest_keeps_a_source_in_one_split():
    sys.path.insert(0, str(ROOT / "scripts"))
    from split_real_corpus import load_excerpts, load_test_sources, normalise_url, split_of

    tests = load_test_sources()
    splits: dict[str, set[str]] = {}
    for entry in load_excerpts():
        splits.setdefault(normalise_url(entry["source_url"]), set()).add(split_of(entry, tests))
    assert all(len(s) == 1 for s in splits.values())


def test_the_frozen_held_out_set_shares_no_source_with_the_tuning_data_and_holds_30_percent_of_the_sources():
    """Everything in ``real_corpus/`` has been tuned on (dev, the retired first test split, and each frozen set
    once scored: ``h2_*``, ``h3_*``, ``h4_*``); the frozen test set is ``real_corpus_heldout/``, from sources never
    seen, and none of its excerpts repeats a tuning excerpt word for word (the same log quoted by another source).
    Issue 9 asks for 30 % of the sources the split is made over: the tuning data and the frozen set. The fourth
    frozen set (``real_corpus_scored/``) was scored and partly read but never tuned on; it shares no source with
    either and is not counted in the split."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from split_real_corpus import load_excerpts, normalise_url

    tuning_excerpts = load_excerpts()
    held_excerpts = load_excerpts(ROOT / "tests/detection/real_corpus_heldout")
    scored_excerpts = load_excerpts(ROOT / "tests/detection/real_corpus_scored")
    tuning = {normalise_url(e["source_url"]) for e in tuning_excerpts}
    held_out = {normalise_url(e["source_url"]) for e in held_excerpts}
    scored = {normalise_url(e["source_url"]) for e in scored_excerpts}
    assert held_out and not held_out & tuning
    assert scored and not scored & (tuning | held_out)
    assert len(held_out) >= 0.30 * len(held_out | tuning)
    earlier_texts = {e["excerpt"].strip() for e in tuning_excerpts + scored_excerpts}
    assert not [e["id"] for e in held_excerpts if e["excerpt"].strip() in earlier_texts]


def test_cross_validation_keeps_each_source_in_one_fold_and_uses_every_excerpt():
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "scripts")]
    from diagnosis_accuracy import real_examples
    from diagnosis_cv import folds

    examples = real_examples("dev") + real_examples("test")
    parts = folds(examples, 5)
    assert sum(len(p) for p in parts) == len(examples)
    owner: dict[str, int] = {}
    for i, part in enumerate(parts):
        for example in part:
            assert owner.setdefault(example.source, i) == i
    assert min(len(p) for p in parts) > len(examples) // 10
    assert folds(examples, 5) == parts  # deterministic


def test_a_calibration_table_is_monotone_and_pools_violators():
    sys.path[:0] = [str(ROOT / "benchmarks")]
    from diagnosis_cv import apply_steps, fit_steps

    scored = [(0.1, True)] * 3 + [(0.4, True)] * 2 + [(0.4, False)] * 2 + [(0.65, True)] * 9 + [(0.65, False)]
    steps = fit_steps(scored)
    values = [calibrated for _, calibrated, _ in steps]
    assert values == sorted(values)
    assert apply_steps(steps, 0.1) == apply_steps(steps, 0.4) == 0.71  # 5 of 7 right, pooled
    assert apply_steps(steps, 0.95) == 0.9
