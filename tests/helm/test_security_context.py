"""Spec: every pod runs as a non-root numeric user on a read-only root file system, without
privilege escalation, capabilities, hostPath volumes or a Kubernetes API token."""

from __future__ import annotations

from tests.helm.chart import Manifests, container, mounts_by_name, volumes_by_name


def test_every_pod_runs_as_non_root_with_a_numeric_uid(manifests: Manifests) -> None:
    for name, pod in manifests.pod_specs().items():
        security = pod["securityContext"]
        assert security["runAsNonRoot"] is True, name
        assert isinstance(security["runAsUser"], int) and security["runAsUser"] > 0, name
        assert security["seccompProfile"] == {"type": "RuntimeDefault"}, name


def test_every_container_is_locked_down(manifests: Manifests) -> None:
    for name, pod in manifests.pod_specs().items():
        security = container(pod)["securityContext"]
        assert security["readOnlyRootFilesystem"] is True, name
        assert security["allowPrivilegeEscalation"] is False, name
        assert security["capabilities"] == {"drop": ["ALL"]}, name
        assert "privileged" not in security, name


def test_tmp_is_the_only_writable_path(manifests: Manifests) -> None:
    for name, pod in manifests.pod_specs().items():
        writable = {m["mountPath"] for m in mounts_by_name(pod).values() if not m.get("readOnly")}
        assert writable == {"/tmp"}, name
        assert "emptyDir" in volumes_by_name(pod)["tmp"], name


def test_no_pod_uses_host_paths_host_network_or_an_api_token(manifests: Manifests) -> None:
    for name, pod in manifests.pod_specs().items():
        assert not [v for v in pod.get("volumes", []) if "hostPath" in v], name
        assert not pod.get("hostNetwork") and not pod.get("hostPID"), name
        assert pod["automountServiceAccountToken"] is False, name


def test_every_container_declares_resources(manifests: Manifests) -> None:
    for name, pod in manifests.pod_specs().items():
        resources = container(pod)["resources"]
        assert resources["requests"]["memory"] and resources["limits"]["memory"], name
