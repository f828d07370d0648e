"""Spec: one Deployment per worker role, each running `lazarus worker --role <role>` on its own queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazarus.config import load_settings
from tests.helm.chart import ROLES, Manifests, container, env_by_name, render


def test_each_role_runs_the_worker_command_for_that_role(manifests: Manifests) -> None:
    for role in ROLES:
        pod = manifests.deployment(role)["spec"]["template"]["spec"]
        assert container(pod)["args"] == ["worker", "--role", role]


def test_each_role_polls_its_own_task_queue_named_for_the_cluster(manifests: Manifests, tmp_path: Path) -> None:
    path = tmp_path / "lazarus.yaml"
    path.write_text(manifests.config_text(), encoding="utf-8")
    settings = load_settings(path)
    queues = settings.task_queues.model_dump()
    assert set(queues) == set(ROLES)
    assert len(set(queues.values())) == len(ROLES)
    assert all(settings.cluster in queue for queue in queues.values())


def test_a_task_queue_given_in_values_is_used_as_given(helm: Path) -> None:
    queues = render(helm, sets={"taskQueues.control": "legacy-control"}).config()["task_queues"]
    assert queues == {"control": "legacy-control"}


def test_the_control_role_runs_at_least_two_replicas(manifests: Manifests) -> None:
    assert manifests.deployment("control")["spec"]["replicas"] >= 2


def test_the_telemetry_role_runs_a_standby_and_keeps_its_log_offsets_in_the_lease_not_in_the_pod(
    manifests: Manifests,
) -> None:
    assert manifests.deployment("telemetry")["spec"]["replicas"] >= 2  # one active, one standing by
    discovery = manifests.config()["discovery"]
    assert "offsets_file" not in discovery  # nothing the next pod needs lives in this pod's /tmp
    lease = discovery["lease"]
    # failover within 30 s: the term's expiry plus one standby poll
    assert lease["ttl"] + lease["renew_interval"] <= 30
    assert lease["renew_interval"] + lease["safety_margin"] < lease["ttl"]


def test_selectors_are_distinct_per_role_and_match_their_pods(manifests: Manifests) -> None:
    selectors = []
    for role in ROLES:
        spec = manifests.deployment(role)["spec"]
        selector = spec["selector"]["matchLabels"]
        assert selector.items() <= spec["template"]["metadata"]["labels"].items()
        assert selector["app.kubernetes.io/component"] == role
        selectors.append(tuple(sorted(selector.items())))
    assert len(set(selectors)) == len(ROLES)


def test_workers_read_the_chart_config_through_LAZARUS_CONFIG(manifests: Manifests) -> None:
    for role in ROLES:
        env = env_by_name(manifests.deployment(role)["spec"]["template"]["spec"])
        assert env["LAZARUS_CONFIG"]["value"] == "/etc/lazarus/config/lazarus.yaml"
        assert env["TEMPORAL_ADDRESS"]["value"] == manifests.config()["temporal"]["address"]
        assert env["TEMPORAL_NAMESPACE"]["value"] == manifests.config()["temporal"]["namespace"]


def test_a_rolling_update_starts_a_new_worker_before_stopping_an_old_one(manifests: Manifests) -> None:
    for role in ROLES:
        rolling = manifests.deployment(role)["spec"]["strategy"]["rollingUpdate"]
        assert rolling == {"maxSurge": 1, "maxUnavailable": 0}


def test_a_config_change_rolls_the_workers(helm: Path, default_manifests: Manifests) -> None:
    changed = render(helm, sets={"mode": "act"})
    for role in ROLES:
        before = default_manifests.deployment(role)["spec"]["template"]["metadata"]["annotations"]
        after = changed.deployment(role)["spec"]["template"]["metadata"]["annotations"]
        assert before["checksum/config"] != after["checksum/config"]


@pytest.mark.parametrize("role", ROLES)
def test_a_disabled_role_has_no_deployment_and_no_budget(helm: Path, role: str) -> None:
    rendered = render(helm, sets={f"workers.{role}.enabled": "false"})
    names = {d["metadata"]["name"] for d in rendered.docs if d["kind"] in ("Deployment", "PodDisruptionBudget")}
    assert not any(name.endswith(f"-{role}") for name in names)


def test_the_image_defaults_to_the_chart_app_version(
    default_manifests: Manifests, production_manifests: Manifests
) -> None:
    pod = default_manifests.deployment("control")["spec"]["template"]["spec"]
    assert container(pod)["image"] == "ghcr.io/lazarus-recovery/lazarus:0.1.0"
    pod = production_manifests.deployment("control")["spec"]["template"]["spec"]
    assert container(pod)["image"] == "registry.example.com/ml/lazarus:0.1.0-rc1"
    assert pod["imagePullSecrets"] == [{"name": "registry-creds"}]
