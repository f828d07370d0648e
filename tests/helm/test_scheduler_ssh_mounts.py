"""Spec: the scheduler role gets the SSH key Secret and known_hosts read-only, where lazarus.yaml looks.

Only roles with `mountSsh` get the key: the control role never holds SSH credentials.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from tests.helm.chart import Manifests, mounts_by_name, render, volumes_by_name


def _pod(manifests: Manifests, role: str) -> dict:
    return manifests.deployment(role)["spec"]["template"]["spec"]


def test_the_scheduler_mounts_key_and_known_hosts_read_only(manifests: Manifests) -> None:
    mounts = mounts_by_name(_pod(manifests, "scheduler"))
    assert mounts["ssh-key"]["readOnly"] is True
    assert mounts["known-hosts"]["readOnly"] is True


def test_the_config_points_into_those_mounts(manifests: Manifests) -> None:
    ssh = manifests.config()["scheduler"]["ssh"]
    mounts = mounts_by_name(_pod(manifests, "scheduler"))
    key_file = PurePosixPath(ssh["key_file"])
    assert key_file.parent == PurePosixPath(mounts["ssh-key"]["mountPath"])
    assert PurePosixPath(ssh["known_hosts"]).parent == PurePosixPath(mounts["known-hosts"]["mountPath"])


def test_the_key_file_name_is_the_secret_key(production_manifests: Manifests) -> None:
    volumes = volumes_by_name(_pod(production_manifests, "scheduler"))
    assert volumes["ssh-key"]["secret"]["secretName"] == "lazarus-ssh-key"
    assert production_manifests.config()["scheduler"]["ssh"]["key_file"].endswith("/id_ed25519")


def test_the_key_is_readable_by_the_worker_group_only(manifests: Manifests) -> None:
    volumes = volumes_by_name(_pod(manifests, "scheduler"))
    assert volumes["ssh-key"]["secret"]["defaultMode"] == 0o440
    assert _pod(manifests, "scheduler")["securityContext"]["fsGroup"] == 10001


def test_roles_without_mountSsh_hold_no_ssh_material(manifests: Manifests) -> None:
    pod = _pod(manifests, "control")  # decisions only: no scheduler access at all
    assert "ssh-key" not in volumes_by_name(pod)
    assert "known-hosts" not in volumes_by_name(pod)


def test_telemetry_reaches_slurm_over_ssh_like_the_scheduler(manifests: Manifests) -> None:
    """Discovery runs squeue/scontrol over the scheduler transport, so it needs the key and host keys."""
    volumes = volumes_by_name(_pod(manifests, "telemetry"))
    assert "ssh-key" in volumes and "known-hosts" in volumes


def test_inline_known_hosts_become_a_chart_config_map(production_manifests: Manifests) -> None:
    config_map = production_manifests.get("ConfigMap", "lz-lazarus-known-hosts")
    assert config_map["data"]["known_hosts"].startswith("login1.cluster.example.com ssh-ed25519 ")
    volumes = volumes_by_name(_pod(production_manifests, "scheduler"))
    assert volumes["known-hosts"]["configMap"]["name"] == "lz-lazarus-known-hosts"


def test_an_existing_known_hosts_config_map_is_used_as_is(default_manifests: Manifests) -> None:
    volumes = volumes_by_name(_pod(default_manifests, "scheduler"))
    assert volumes["known-hosts"]["configMap"]["name"] == "lazarus-ssh-known-hosts"
    assert not [d for d in default_manifests.of_kind("ConfigMap") if d["metadata"]["name"].endswith("known-hosts")]


def test_local_transport_mounts_no_ssh_material(helm: Path) -> None:
    rendered = render(helm, sets={"scheduler.transport": "local"})
    assert "ssh" not in rendered.config()["scheduler"]
    assert "ssh-key" not in volumes_by_name(_pod(rendered, "scheduler"))
