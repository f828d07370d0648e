"""Render the Lazarus chart with the real `helm` binary and look things up in the result.

The tests read rendered YAML, never templates: what they check is exactly what `helm install`
would send to the API server.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "lazarus"
HELM = REPO / ".tools" / "bin" / "helm"
FETCH_SCRIPT = REPO / "scripts" / "fetch-helm.sh"
PRODUCTION_VALUES = CHART / "ci" / "production-values.yaml"
ROLES = ("control", "scheduler", "telemetry")
RELEASE = "lz"
NAMESPACE = "recovery"


@dataclass(frozen=True)
class HelmResult:
    returncode: int
    stdout: str
    stderr: str


def run_helm(helm: Path, *args: str) -> HelmResult:
    proc = subprocess.run([str(helm), *args], capture_output=True, text=True, timeout=60, check=False)
    return HelmResult(proc.returncode, proc.stdout, proc.stderr)


def template_args(*values_files: Path, sets: dict[str, str] | None = None) -> list[str]:
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    for path in values_files:
        args += ["-f", str(path)]
    for key, value in (sets or {}).items():
        args += ["--set", f"{key}={value}"]
    return args


class Manifests:
    """The documents of one `helm template` run, with lookups by kind and name."""

    def __init__(self, text: str) -> None:
        self.docs: list[dict[str, Any]] = [d for d in yaml.safe_load_all(text) if d]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if d["kind"] == kind]

    def get(self, kind: str, name: str) -> dict[str, Any]:
        matches = [d for d in self.of_kind(kind) if d["metadata"]["name"] == name]
        assert len(matches) == 1, f"expected one {kind} {name}, found {len(matches)}"
        return matches[0]

    def deployment(self, role: str) -> dict[str, Any]:
        return self.get("Deployment", f"{RELEASE}-lazarus-{role}")

    def config_text(self) -> str:
        return self.get("ConfigMap", f"{RELEASE}-lazarus-config")["data"]["lazarus.yaml"]

    def config(self) -> dict[str, Any]:
        return yaml.safe_load(self.config_text())

    def pod_specs(self) -> dict[str, dict[str, Any]]:
        """Pod spec of every workload, keyed by workload name."""
        return {
            d["metadata"]["name"]: d["spec"]["template"]["spec"]
            for d in self.docs
            if d["kind"] in ("Deployment", "DaemonSet", "StatefulSet", "Job")
        }


def render(helm: Path, *values_files: Path, sets: dict[str, str] | None = None) -> Manifests:
    result = run_helm(helm, *template_args(*values_files, sets=sets))
    assert result.returncode == 0, f"helm template failed: {result.stderr}"
    return Manifests(result.stdout)


def container(pod_spec: dict[str, Any]) -> dict[str, Any]:
    (only,) = pod_spec["containers"]
    return only


def mounts_by_name(pod_spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in container(pod_spec).get("volumeMounts", [])}


def volumes_by_name(pod_spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in pod_spec.get("volumes", [])}


def env_by_name(pod_spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container(pod_spec).get("env", [])}
