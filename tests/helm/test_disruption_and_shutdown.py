"""Spec: voluntary disruptions take one worker of a role at a time, and a stopping worker gets more
time than its own graceful shutdown, so a Slurm action in flight is never SIGKILLed half-way."""

from __future__ import annotations

from datetime import timedelta

from pydantic import TypeAdapter

from tests.helm.chart import ROLES, Manifests


def test_each_role_has_a_budget_selecting_exactly_its_pods(manifests: Manifests) -> None:
    budgets = {d["metadata"]["name"]: d for d in manifests.of_kind("PodDisruptionBudget")}
    for role in ROLES:
        budget = budgets[f"lz-lazarus-{role}"]["spec"]
        pod_labels = manifests.deployment(role)["spec"]["template"]["metadata"]["labels"]
        assert budget["selector"]["matchLabels"].items() <= pod_labels.items()
        assert budget["selector"]["matchLabels"]["app.kubernetes.io/component"] == role
    assert len(budgets) == len(ROLES)


def test_budgets_never_block_a_node_drain(manifests: Manifests) -> None:
    # maxUnavailable (not minAvailable) so a single-replica role can still be evicted.
    for budget in manifests.of_kind("PodDisruptionBudget"):
        assert budget["spec"] == {**budget["spec"], "maxUnavailable": 1}
        assert "minAvailable" not in budget["spec"]


def test_the_grace_period_exceeds_the_worker_graceful_shutdown(manifests: Manifests) -> None:
    graceful = TypeAdapter(timedelta).validate_python(manifests.config()["worker"]["graceful_shutdown"])
    for role in ROLES:
        grace = manifests.deployment(role)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert timedelta(seconds=grace) > graceful


def test_replicas_of_a_role_prefer_different_nodes(manifests: Manifests) -> None:
    spec = manifests.deployment("control")["spec"]["template"]["spec"]
    (term,) = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert term["podAffinityTerm"]["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "control"
