"""Spec: every rendered manifest is a valid Kubernetes object, checked strictly (no unknown fields).

Validated offline with kubernetes-validate against the oldest Kubernetes the chart claims
(Chart.yaml kubeVersion) and the newest the pinned helm knows. CRDs have no bundled schema and
are the only documents allowed to skip validation.
"""

from __future__ import annotations

import kubernetes_validate
import pytest

from tests.helm.chart import Manifests

KUBERNETES_VERSIONS = ("1.29.0", "1.35.0")
CRD_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
}


@pytest.mark.parametrize("k8s_version", KUBERNETES_VERSIONS)
def test_every_manifest_passes_strict_schema_validation(manifests: Manifests, k8s_version: str) -> None:
    for doc in manifests.docs:
        if (doc["apiVersion"], doc["kind"]) in CRD_KINDS:
            continue
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        try:
            kubernetes_validate.validate(doc, k8s_version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{where} is invalid for Kubernetes {k8s_version} at {list(exc.path)}: {exc.message}")


def test_only_crds_lack_a_schema(production_manifests: Manifests) -> None:
    for doc in production_manifests.docs:
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSIONS[-1], strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            assert (doc["apiVersion"], doc["kind"]) in CRD_KINDS


def test_the_service_monitor_selects_the_node_agent_service(production_manifests: Manifests) -> None:
    (monitor,) = production_manifests.of_kind("ServiceMonitor")
    (service,) = production_manifests.of_kind("Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [service["spec"]["ports"][0]["name"]]
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
