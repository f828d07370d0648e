"""Spec: every worker pod serves both metrics endpoints; the chart can add a PodMonitor scraping them, the
alert rules as a PrometheusRule (the very groups promtool tests) and the Grafana dashboard as a ConfigMap
the Grafana sidecar picks up by its label."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from lazarus.config import load_settings
from tests.helm.chart import CHART, ROLES, Manifests, container, render

ALERTS = CHART / "files" / "alerts.yml"
DASHBOARD = CHART / "files" / "grafana-dashboard.json"


def test_every_worker_serves_both_metrics_endpoints_by_default(default_manifests: Manifests) -> None:
    assert default_manifests.config()["metrics"] == {"port": 9464, "temporal_port": 9465, "cluster_view_interval": 15}
    for role in ROLES:
        ports = container(default_manifests.deployment(role)["spec"]["template"]["spec"])["ports"]
        assert ports == [
            {"name": "metrics", "containerPort": 9464, "protocol": "TCP"},
            {"name": "temporal-metrics", "containerPort": 9465, "protocol": "TCP"},
        ]


def test_metrics_can_be_turned_off(helm: Path, tmp_path: Path) -> None:
    manifests = render(helm, sets={"metrics.enabled": "false"})
    assert manifests.config()["metrics"] == {"port": 0, "temporal_port": 0}
    for role in ROLES:
        assert "ports" not in container(manifests.deployment(role)["spec"]["template"]["spec"])
    path = tmp_path / "lazarus.yaml"
    path.write_text(manifests.config_text())
    assert load_settings(path).metrics.urls() == []


def test_monitoring_objects_are_off_by_default(default_manifests: Manifests) -> None:
    assert not default_manifests.of_kind("PodMonitor") and not default_manifests.of_kind("PrometheusRule")
    assert "lz-lazarus-dashboard" not in [c["metadata"]["name"] for c in default_manifests.of_kind("ConfigMap")]


def test_the_pod_monitor_scrapes_both_endpoints_of_every_worker_and_not_the_node_agent(
    production_manifests: Manifests,
) -> None:
    (monitor,) = production_manifests.of_kind("PodMonitor")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert [(e["port"], e["path"], e["interval"]) for e in monitor["spec"]["podMetricsEndpoints"]] == [
        ("metrics", "/metrics", "15s"),
        ("temporal-metrics", "/metrics", "15s"),
    ]
    selector = monitor["spec"]["selector"]
    (components,) = selector["matchExpressions"]

    def selected(labels: dict[str, str]) -> bool:
        return (
            selector["matchLabels"].items() <= labels.items() and labels.get(components["key"]) in components["values"]
        )

    for role in ROLES:
        assert selected(production_manifests.deployment(role)["spec"]["template"]["metadata"]["labels"])
    agent = production_manifests.get("DaemonSet", "lz-lazarus-node-agent")
    assert not selected(agent["spec"]["template"]["metadata"]["labels"])


def test_the_prometheus_rule_carries_the_tested_rules_file(production_manifests: Manifests) -> None:
    (rule,) = production_manifests.of_kind("PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert rule["spec"] == yaml.safe_load(ALERTS.read_text())
    assert "{{ $value | humanizeDuration }}" in json.dumps(rule["spec"])  # Prometheus's templates, not Helm's


def test_the_dashboard_config_map_carries_the_sidecar_label_and_the_dashboard(production_manifests: Manifests) -> None:
    board = production_manifests.get("ConfigMap", "lz-lazarus-dashboard")
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert board["metadata"]["annotations"] == {"grafana_folder": "Lazarus"}
    assert json.loads(board["data"]["lazarus.json"]) == json.loads(DASHBOARD.read_text())
