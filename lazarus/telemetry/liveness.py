"""Node liveness: a node whose agent fell silent while its peers' agents answer, and whose jobs stopped progressing.

A node that dies (power, kernel panic, its slurmd killed) takes its node agent with it. Slurm notices only after
``SlurmdTimeout`` (300 s by default), and a job whose ranks block on the dead peer prints nothing: no log line, no
exit. Telemetry therefore asks every known agent, once per ``node_agents.liveness_interval``, whether it answers.

The rules (pure, :func:`lost_nodes` and :func:`node_failure`):

- a node is *lost* when its agent answered before and has not answered for ``liveness_silence``;
- a blind spell is not a node failure: when half of the known agents or more are silent at once (the network to
  the agents, or the telemetry host itself), no node is lost, so at least three known agents are needed;
- a job is hit when a lost node is in its allocation **and** its progress stopped (no progress line for
  ``max(MIN_STALL, 2 x its slowest step)``): an agent that crashed under a healthy job is not a node failure, and a
  job that never printed progress is left to the scheduler's view.

The finding is an infrastructure crash naming the lost node, implicated by the node agents (outside the job),
so the job restarts excluding it.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from lazarus.config import NodeAgentSettings
from lazarus.health.verdicts import agent_url
from lazarus.models.diagnosis import NODE_LOST_SIGNATURE, Category, Diagnosis, EvidenceSource, FailureKind, RetryAdvice
from lazarus.models.diagnosis import Evidence as LineEvidence

RULE_ID = NODE_LOST_SIGNATURE
MIN_STALL = timedelta(seconds=3)
MAX_SILENT_SHARE = 0.5  # half the agents or more silent at once: a blind spell, not node failures


@dataclass
class AgentSightings:
    """When each node's agent last answered, and when it was last asked."""

    answered_at: dict[str, datetime] = field(default_factory=dict)
    asked_at: dict[str, datetime] = field(default_factory=dict)

    def record(self, node: str, at: datetime, answered: bool) -> None:
        self.asked_at[node] = at
        if answered:
            self.answered_at[node] = at


def lost_nodes(sightings: AgentSightings, now: datetime, silence: timedelta) -> list[str]:
    """Nodes whose agent answered once and has been silent for ``silence``, unless this is a blind spell."""
    known = [n for n in sightings.asked_at if n in sightings.answered_at]
    silent = [n for n in known if now - sightings.answered_at[n] >= silence]
    if not silent or len(silent) >= MAX_SILENT_SHARE * len(known):
        return []
    return sorted(silent)


def stalled(last_progress_at: datetime | None, slowest_step: timedelta | None, now: datetime) -> bool:
    """The job printed progress before and none for ``max(MIN_STALL, 2 x its slowest step)``."""
    if last_progress_at is None:
        return False
    return now - last_progress_at >= max(MIN_STALL, 2 * (slowest_step or timedelta(0)))


def node_failure(
    allocation: Iterable[str],
    lost: Iterable[str],
    sightings: AgentSightings,
    last_progress_at: datetime | None,
    slowest_step: timedelta | None,
    now: datetime,
) -> Diagnosis | None:
    """The node-failure diagnosis for a job on a lost node whose progress stopped; None otherwise."""
    hit = sorted(set(allocation) & set(lost))
    if not hit or not stalled(last_progress_at, slowest_step, now):
        return None
    assert last_progress_at is not None  # stalled() says so
    evidence = [
        LineEvidence(
            file="node-agent",
            line_no=0,
            text=f"{node}: agent silent since {sightings.answered_at[node]:%H:%M:%S.%f}"[:-3]
            + f"; the job's last progress at {last_progress_at:%H:%M:%S}",
            rule=RULE_ID,
        )
        for node in hit
    ]
    return Diagnosis(
        failure_kind=FailureKind.CRASH,
        category=Category.INFRASTRUCTURE,
        signature=RULE_ID,
        retry_advice=RetryAdvice.RETRY_EXCLUDING_NODES,
        implicated_nodes=hit,
        implicated_by=EvidenceSource.NODE_AGENT,
        confidence=0.8,
        evidence=evidence,
        explanation=(
            f"node {', '.join(hit)} stopped answering (its node agent is silent while the other agents answer) and "
            "the job's progress stopped with it: a node failure; the surviving ranks are waiting on a dead peer."
        ),
    )


def _answers(url: str, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            resp.read(1)
            return bool(200 <= resp.status < 300)
    except (OSError, ValueError):
        return False


async def probe(agents: NodeAgentSettings, nodes: Iterable[str], sightings: AgentSightings, now: datetime) -> None:
    """Ask each node's agent once (concurrently, each within ``agents.timeout_s``) and record who answered."""
    targets = {n: url for n in sorted(set(nodes)) if (url := agent_url(agents, n)) is not None}
    answers = await asyncio.gather(*(asyncio.to_thread(_answers, url, agents.timeout_s) for url in targets.values()))
    for node, answered in zip(targets, answers, strict=True):
        sightings.record(node, now, answered)
