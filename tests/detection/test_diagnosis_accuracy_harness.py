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
    assert len(tests) >= 0.3 * len(splits)
