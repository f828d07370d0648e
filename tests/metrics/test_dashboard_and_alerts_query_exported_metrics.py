"""Spec: every dashboard panel and every alert rule queries metrics the code exports (the catalogue, or the
Temporal SDK metrics it names), every Lazarus metric is on the dashboard or in an alert, and the committed
dashboard is what scripts/gen_dashboard.py writes. The queries themselves run against a real Prometheus in
tests/e2e/test_metrics_after_a_recovery.py."""

from __future__ import annotations

import json
import subprocess
import sys

from lazarus.models.metrics import CATALOGUE, series_names
from tests.metrics.promql import REPO, alert_queries, dashboard_queries, exported_series


def test_every_query_names_only_exported_metrics():
    exported = exported_series()
    for query in dashboard_queries() + alert_queries():
        assert query.metrics, f"{query.where} names no metric: {query.expr}"
        assert query.metrics <= exported, f"{query.where} reads {sorted(query.metrics - exported)}, not exported"


def test_every_lazarus_metric_is_on_the_dashboard_or_in_an_alert():
    read = set().union(*(q.metrics for q in dashboard_queries() + alert_queries()))
    unread = [spec.name for spec in CATALOGUE if not set(series_names(spec)) & read]
    assert unread == []


def test_the_dashboard_is_generated():
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_dashboard.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_the_dashboard_reads_its_data_source_from_a_variable():
    board = json.loads((REPO / "helm" / "lazarus" / "files" / "grafana-dashboard.json").read_text())
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource"]
    for panel in board["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
