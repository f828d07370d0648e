"""The node agents' verdict on some nodes, asked by the node ledger before a drain (activity ``node_health``).

A job's own output can by itself only exclude a node from that job; the node's
agent, reading NVML as root, is evidence from outside the job. The verdict comes
from Prometheus when it collects the agents (``prometheus.enabled``), else
straight from each agent's metrics endpoint (``node_agents``: the dev stack runs
one agent per node, without Prometheus). Only a sample labelled with the node's
own name counts, and only a recent one (``node_agents.max_age``): no news is not
bad news, and not good news either.
"""

from __future__ import annotations

import re
import urllib.request
from datetime import UTC, datetime

from prometheus_client.parser import text_string_to_metric_families

from lazarus.config import NodeAgentSettings
from lazarus.health.fleet import NodeHealthRequest, NodeHealthSummary, fetch_node_health
from lazarus.health.models import Verdict
from lazarus.models.ledger import NodeHealthQuery, NodeHealthReport, NodeHealthVerdict
from lazarus.straggler.prometheus import PrometheusApi, PrometheusError

MAX_METRICS_BYTES = 4 << 20
_NODE = re.compile(r"^[A-Za-z0-9_.-]+$")
_LEVELS = {v.level: v for v in Verdict}


def node_verdicts(
    query: NodeHealthQuery, prometheus: PrometheusApi | None, agents: NodeAgentSettings, now: datetime | None = None
) -> NodeHealthReport:
    """The current verdict of each node of ``query`` that has one (blocking: run it in a thread)."""
    nodes = [n for n in query.nodes if _NODE.match(n)]
    if prometheus is not None:
        try:
            result = fetch_node_health(prometheus, NodeHealthRequest(nodes=nodes))
        except PrometheusError as exc:
            return NodeHealthReport(unavailable=f"Prometheus: {exc}")
        return NodeHealthReport(verdicts=[_from_summary(s) for s in result.nodes])
    if not agents.configured:
        return NodeHealthReport(unavailable="no node agent source configured (prometheus or node_agents)")
    verdicts, problems = [], []
    for node in nodes:
        url = agent_url(agents, node)
        if url is None:
            continue
        try:
            verdict = read_agent(url, node, agents, now or datetime.now(UTC))
        except (OSError, ValueError) as exc:
            problems.append(f"{node}: {type(exc).__name__}: {str(exc)[:80]}")
            continue
        if verdict is not None:
            verdicts.append(verdict)
    return NodeHealthReport(verdicts=verdicts, unavailable="; ".join(problems)[:500] or None)


def agent_url(agents: NodeAgentSettings, node: str) -> str | None:
    """The metrics URL of ``node``'s agent, or None when none is configured for it."""
    if node in agents.urls:
        return agents.urls[node]
    if agents.url_template and _NODE.match(node):
        return agents.url_template.replace("{node}", node)
    return None


def read_agent(url: str, node: str, agents: NodeAgentSettings, now: datetime) -> NodeHealthVerdict | None:
    """``node``'s verdict from its agent at ``url``; None when the agent has no recent verdict for that node."""
    with urllib.request.urlopen(url, timeout=agents.timeout_s) as resp:
        text = resp.read(MAX_METRICS_BYTES).decode("utf-8", errors="replace")
    level, polled, xids = None, None, set()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("Hostname") != node:
                continue  # an agent vouches only for its own node
            if sample.name == "lazarus_node_health":
                level = max(int(sample.value), level or 0)
            elif sample.name == "lazarus_node_agent_last_poll_timestamp_seconds":
                polled = sample.value
            elif sample.name == "DCGM_FI_DEV_XID_ERRORS" and sample.value > 0:
                xids.add(int(sample.value))
    if level is None or polled is None or now.timestamp() - polled > agents.max_age.total_seconds():
        return None
    verdict = _LEVELS.get(level, Verdict.FAILED)
    return _verdict(node, verdict, sorted(xids))


def _from_summary(summary: NodeHealthSummary) -> NodeHealthVerdict:
    return _verdict(summary.node, summary.verdict, summary.xid_codes)


def _verdict(node: str, verdict: Verdict, xids: list[int]) -> NodeHealthVerdict:
    shown = f" (Xid {', '.join(map(str, xids))})" if xids else ""
    return NodeHealthVerdict(node=node, failed=verdict == Verdict.FAILED, detail=f"{verdict.value}{shown}")
