"""Spec: the optional node agent is a DaemonSet on GPU nodes serving NVML health on port 9400,
without hostPath volumes and without taking a GPU from training jobs."""

from __future__ import annotations

from pathlib import Path

from tests.helm.chart import Manifests, container, env_by_name, render


def _agent(manifests: Manifests) -> dict:
    return manifests.get("DaemonSet", "lz-lazarus-node-agent")["spec"]["template"]["spec"]


def test_the_agent_is_off_by_default(default_manifests: Manifests) -> None:
    assert not default_manifests.of_kind("DaemonSet")
    assert not default_manifests.of_kind("Service")


def test_the_agent_runs_lazarus_node_agent_on_port_9400(production_manifests: Manifests) -> None:
    agent = container(_agent(production_manifests))
    assert agent["args"][:3] == ["node-agent", "--port", "9400"]
    assert agent["args"][-2:] == ["--node", "$(NODE_NAME)"]
    assert agent["ports"] == [{"name": "metrics", "containerPort": 9400, "protocol": "TCP"}]
    assert (
        env_by_name(_agent(production_manifests))["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    )


def test_the_agent_runs_only_on_gpu_nodes(production_manifests: Manifests) -> None:
    pod = _agent(production_manifests)
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def test_the_agent_sees_gpus_through_the_nvidia_runtime_without_requesting_one(production_manifests: Manifests) -> None:
    pod = _agent(production_manifests)
    assert pod["runtimeClassName"] == "nvidia"
    assert env_by_name(pod)["NVIDIA_VISIBLE_DEVICES"]["value"] == "all"
    resources = container(pod)["resources"]
    assert not any("nvidia.com/gpu" in section for section in resources.values())
    assert not [v for v in pod["volumes"] if "hostPath" in v]


def test_the_agent_is_probed_over_its_metrics_endpoint(production_manifests: Manifests) -> None:
    agent = container(_agent(production_manifests))
    for probe in ("readinessProbe", "livenessProbe"):
        assert agent[probe]["httpGet"] == {"path": "/metrics", "port": "metrics"}


def test_a_headless_service_exposes_every_agent(production_manifests: Manifests) -> None:
    service = production_manifests.get("Service", "lz-lazarus-node-agent")
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["ports"][0]["port"] == 9400
    pod_labels = production_manifests.get("DaemonSet", "lz-lazarus-node-agent")["spec"]["template"]["metadata"][
        "labels"
    ]
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_the_service_monitor_is_optional(helm: Path) -> None:
    rendered = render(helm, sets={"nodeAgent.enabled": "true"})
    assert rendered.of_kind("DaemonSet") and rendered.of_kind("Service")
    assert not rendered.of_kind("ServiceMonitor")
