"""Spec: docs/metrics.md is generated from the catalogue and is current; every metric is named by the
Prometheus conventions, has a help text, and documents its labels' values."""

from __future__ import annotations

import re
import subprocess
import sys

from lazarus.models.metrics import CATALOGUE
from tests.metrics.promql import REPO


def test_the_committed_page_matches_the_catalogue():
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_metrics_docs.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_every_metric_is_on_the_page():
    page = (REPO / "docs" / "metrics.md").read_text()
    for spec in CATALOGUE:
        assert f"`{spec.name}`" in page


def test_names_follow_the_prometheus_conventions():
    assert len({s.name for s in CATALOGUE}) == len(CATALOGUE)
    for spec in CATALOGUE:
        assert re.fullmatch(r"lazarus_[a-z][a-z0-9_]*", spec.name), spec.name
        assert spec.help.endswith(".") and len(spec.help) > 20, spec.name
        assert spec.name.endswith("_total") == (spec.kind == "counter"), spec.name
        if spec.kind == "histogram":
            assert spec.name.endswith("_seconds") and spec.buckets == tuple(sorted(spec.buckets)), spec.name
        assert not {"job_id", "job", "node", "instance"} & set(spec.labels), spec.name  # bounded labels only
        if spec.source == "workflow":
            assert spec.labels[0] == "cluster" and spec.roles == ("control",), spec.name
            assert spec.kind != "gauge", spec.name  # several control workers: gauges would go stale
