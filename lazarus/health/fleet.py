"""Node verdicts across the cluster, read back from the node agents' metrics in Prometheus.

Attribution asks "is anything wrong with the GPUs of these nodes?" for the
nodes a failed attempt ran on. One instant query answers it for all of them:

    {__name__=~"lazarus_node_health|lazarus_gpu_health|DCGM_FI_DEV_XID_ERRORS", Hostname=~"gpu-01|gpu-02"}

A node with no ``lazarus_node_health`` sample (no agent, or an agent silent for
longer than Prometheus's 5-minute staleness) is reported as missing: no news
is not good news.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lazarus.health.models import Verdict
from lazarus.straggler.prometheus import PrometheusApi

_NODE = re.compile(r"^[A-Za-z0-9_.-]+$")
_BY_LEVEL = {v.level: v for v in Verdict}


class NodeHealthRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    nodes: list[str]

    @field_validator("nodes")
    @classmethod
    def _safe_names(cls, v: list[str]) -> list[str]:
        bad = [n for n in v if not _NODE.match(n)]
        if bad:
            raise ValueError(f"node names may hold only letters, digits and _.- ; got {bad[:3]}")
        return v

    def promql(self) -> str:
        # A dot in a node name is literal; in the PromQL string the regex escape needs a doubled backslash.
        names = "|".join(n.replace(".", "\\\\.") for n in self.nodes)
        return f'{{__name__=~"lazarus_node_health|lazarus_gpu_health|DCGM_FI_DEV_XID_ERRORS", Hostname=~"{names}"}}'


class NodeHealthSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node: str
    verdict: Verdict
    failed_gpus: list[str] = Field(default_factory=list, description="GPU indexes whose own verdict is failed")
    xid_codes: list[int] = Field(default_factory=list, description="last Xid per GPU, where non-zero")


class NodeHealthResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    nodes: list[NodeHealthSummary] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list, description="nodes with no current agent data")


def fetch_node_health(api: PrometheusApi, request: NodeHealthRequest) -> NodeHealthResult:
    """The latest verdict of each requested node; raises PrometheusError subclasses like the throughput query."""
    if not request.nodes:
        return NodeHealthResult()
    verdicts: dict[str, Verdict] = {}
    failed: dict[str, set[str]] = {}
    xids: dict[str, set[int]] = {}
    for item in api.instant("node health query", request.promql()):
        labels, value = item.get("metric", {}), float(item["value"][1])
        node, name = labels.get("Hostname", ""), labels.get("__name__")
        if name == "lazarus_node_health":
            level = max(int(value), verdicts[node].level if node in verdicts else 0)
            verdicts[node] = _BY_LEVEL.get(level, Verdict.FAILED)
        elif name == "lazarus_gpu_health" and value >= Verdict.FAILED.level:
            failed.setdefault(node, set()).add(labels.get("gpu", "?"))
        elif name == "DCGM_FI_DEV_XID_ERRORS" and value > 0:
            xids.setdefault(node, set()).add(int(value))
    return NodeHealthResult(
        nodes=[
            NodeHealthSummary(
                node=n, verdict=verdicts[n], failed_gpus=sorted(failed.get(n, ())), xid_codes=sorted(xids.get(n, ()))
            )
            for n in request.nodes
            if n in verdicts
        ],
        missing=[n for n in request.nodes if n not in verdicts],
    )
