"""Spec: the lazarus.yaml the chart renders is accepted by lazarus.config.load_settings, and says
what the values said."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from lazarus.config import DEFAULT_LOG_ROOTS, Settings, load_settings
from lazarus.models.policy import Mode
from tests.helm.chart import Manifests, render


@pytest.fixture(autouse=True)
def _no_lazarus_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("LAZARUS_"):
            monkeypatch.delenv(name)


def _load(manifests: Manifests, tmp_path: Path) -> Settings:
    path = tmp_path / "lazarus.yaml"
    path.write_text(manifests.config_text(), encoding="utf-8")
    return load_settings(path)


def test_the_default_config_loads_in_monitor_mode_over_ssh(default_manifests: Manifests, tmp_path: Path) -> None:
    settings = _load(default_manifests, tmp_path)
    assert settings.mode is Mode.MONITOR
    assert settings.cluster == "slurm"
    assert settings.temporal.address == "temporal-frontend.temporal.svc:7233"
    assert settings.temporal.namespace == "recovery"
    assert settings.scheduler.transport == "ssh"
    assert settings.scheduler.ssh is not None and settings.scheduler.ssh.host == "slurm-login"
    assert settings.worker.graceful_shutdown == timedelta(seconds=30)


def test_the_production_config_loads_with_tls_act_mode_and_policies(
    production_manifests: Manifests, tmp_path: Path
) -> None:
    settings = _load(production_manifests, tmp_path)
    assert settings.cluster == "prod-a100"
    assert settings.mode is Mode.ACT
    assert settings.temporal.tls is True
    assert settings.temporal.tls_client_cert == Path("/etc/lazarus/temporal-tls/tls.crt")
    assert settings.temporal.ui_url == "https://temporal.example.com"
    ssh = settings.scheduler.ssh
    assert ssh is not None
    assert (ssh.host, ssh.port, ssh.user) == ("login1.cluster.example.com", 2222, "lazarus")
    assert ssh.key_file == Path("/etc/lazarus/ssh/key/id_ed25519")
    assert settings.scheduler.command_timeout_s == 20
    assert settings.policies["default"].hang_budget == timedelta(minutes=30)
    assert settings.policies["default"].decision_timeout == timedelta(minutes=10)
    assert settings.policies["strict"].max_attempts == 3
    assert settings.policies["strict"].mode is Mode.MONITOR
    assert settings.policies["strict"].selectable and not settings.policies["default"].selectable
    assert settings.worker.graceful_shutdown == timedelta(seconds=60)


def test_environment_overrides_still_apply_on_top_of_the_chart_config(
    production_manifests: Manifests, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The chart injects the Temporal API key this way (LAZARUS_TEMPORAL__API_KEY from a Secret).
    monkeypatch.setenv("LAZARUS_TEMPORAL__API_KEY", "secret-from-env")
    assert _load(production_manifests, tmp_path).temporal.api_key == "secret-from-env"


def test_prometheus_attribution_and_ledger_values_reach_the_config(
    production_manifests: Manifests, tmp_path: Path
) -> None:
    settings = _load(production_manifests, tmp_path)
    assert settings.prometheus.enabled and settings.prometheus.url == "http://prometheus-server.monitoring.svc:9090"
    assert settings.attribution.provider_url == "http://attribution.ml-infra.svc/v1/attribute"
    assert settings.attribution.timeout_s == 1.5
    assert (settings.ledger.lemon_job_count, settings.ledger.max_drain_fraction) == (2, 0.1)
    assert settings.ledger.lemon_window == timedelta(days=1)


def test_log_roots_and_https_credentials_reach_the_config(helm: Path, tmp_path: Path) -> None:
    manifests = render(
        helm,
        sets={
            "discovery.logRoots[0]": "/lustre/jobs",
            "discovery.logReadTimeoutSeconds": "5",
            "prometheus.caFile": "/etc/lazarus/prom/ca.crt",
            "prometheus.basicAuthFile": "/etc/lazarus/prom/basic",
            "attribution.bearerTokenFile": "/etc/lazarus/attribution/token",
        },
    )
    settings = _load(manifests, tmp_path)
    assert settings.discovery.log_roots == [Path("/lustre/jobs")] and settings.discovery.log_read_timeout_s == 5
    assert settings.prometheus.ca_file == Path("/etc/lazarus/prom/ca.crt")
    assert settings.prometheus.basic_auth_file == Path("/etc/lazarus/prom/basic")
    assert settings.prometheus.bearer_token_file is None and settings.attribution.basic_auth_file is None
    assert settings.attribution.bearer_token_file == Path("/etc/lazarus/attribution/token")


def test_the_default_log_roots_reach_the_config(default_manifests: Manifests, tmp_path: Path) -> None:
    assert _load(default_manifests, tmp_path).discovery.log_roots == [Path(p) for p in DEFAULT_LOG_ROOTS]


def test_notification_webhooks_reach_the_config(helm: Path, tmp_path: Path) -> None:
    manifests = render(
        helm,
        sets={
            "notifications.webhooks[0].url_file": "/etc/lazarus/slack/url",
            "notifications.webhooks[0].format": "slack",
            "notifications.webhooks[0].events[0]": "advice-pending",
            "notifications.webhooks[1].url": "http://alert-router.ops.svc:8080/lazarus",
        },
    )
    webhooks = _load(manifests, tmp_path).notifications.webhooks
    assert webhooks[0].url_file == Path("/etc/lazarus/slack/url") and webhooks[0].format == "slack"
    assert [e.value for e in webhooks[0].events] == ["advice-pending"]
    assert webhooks[1].url == "http://alert-router.ops.svc:8080/lazarus" and webhooks[1].format == "json"


def test_the_default_chart_posts_no_notices(default_manifests: Manifests, tmp_path: Path) -> None:
    assert _load(default_manifests, tmp_path).notifications.webhooks == []
