"""Spec: the Temporal TLS Secret is mounted read-only in every worker and the config points at it;
an API key comes from a Secret through the environment, never through the ConfigMap."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from tests.helm.chart import ROLES, Manifests, env_by_name, mounts_by_name, render, volumes_by_name


def test_every_worker_mounts_the_tls_secret_read_only(production_manifests: Manifests) -> None:
    for role in ROLES:
        pod = production_manifests.deployment(role)["spec"]["template"]["spec"]
        assert mounts_by_name(pod)["temporal-tls"]["readOnly"] is True
        assert volumes_by_name(pod)["temporal-tls"]["secret"]["secretName"] == "lazarus-temporal-mtls"


def test_the_config_uses_the_mounted_certificate_files(production_manifests: Manifests) -> None:
    temporal = production_manifests.config()["temporal"]
    pod = production_manifests.deployment("control")["spec"]["template"]["spec"]
    tls_dir = PurePosixPath(mounts_by_name(pod)["temporal-tls"]["mountPath"])
    assert temporal["tls"] is True
    assert PurePosixPath(temporal["tls_client_cert"]) == tls_dir / "tls.crt"
    assert PurePosixPath(temporal["tls_client_key"]) == tls_dir / "tls.key"
    assert PurePosixPath(temporal["tls_server_ca"]) == tls_dir / "ca.crt"


def test_tls_without_a_secret_uses_system_roots(helm: Path) -> None:
    temporal = render(helm, sets={"temporal.tls.enabled": "true"}).config()["temporal"]
    assert temporal["tls"] is True
    assert not {"tls_client_cert", "tls_client_key", "tls_server_ca"} & temporal.keys()


def test_the_api_key_comes_from_its_secret(production_manifests: Manifests) -> None:
    for role in ROLES:
        env = env_by_name(production_manifests.deployment(role)["spec"]["template"]["spec"])
        ref = env["LAZARUS_TEMPORAL__API_KEY"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": "lazarus-temporal-api-key", "key": "api-key"}
    assert "api_key" not in production_manifests.config()["temporal"]
