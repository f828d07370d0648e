"""Spec: the arguments the chart gives each container are accepted by the real `lazarus` parser
and select what the chart means (the worker role, the agent's port and node)."""

from __future__ import annotations

from lazarus.cli.main import build_parser
from tests.helm.chart import ROLES, Manifests, container


def test_every_worker_role_parses_to_that_role(default_manifests: Manifests) -> None:
    parser = build_parser()
    for role in ROLES:
        args = container(default_manifests.deployment(role)["spec"]["template"]["spec"])["args"]
        parsed = parser.parse_args(args)
        assert (parsed.command, parsed.role) == ("worker", role)


def test_the_node_agent_arguments_parse(production_manifests: Manifests) -> None:
    pod = production_manifests.get("DaemonSet", "lz-lazarus-node-agent")["spec"]["template"]["spec"]
    # Kubernetes expands $(NODE_NAME) from the downward API before the process starts.
    args = [a.replace("$(NODE_NAME)", "gpu-node-7") for a in container(pod)["args"]]
    parsed = build_parser().parse_args(args)
    assert (parsed.command, parsed.port, parsed.interval, parsed.node) == ("node-agent", 9400, 10.0, "gpu-node-7")
