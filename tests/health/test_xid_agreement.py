"""The node agent and the log attribution give the same verdict for every Xid: one table, two readers.

A verdict is (category, whether the node is blamed, what happens to the node).
The agent's comes from assessing a GPU that reported the Xid over NVML; the log
attribution's from diagnosing the kernel line the driver writes for it. The
node is *excluded* when the agent fails it and the diagnosis restarts the job
without it; *watched* when the agent marks it degraded and the diagnosis names
it for a hardware warning; *kept* when neither blames it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.detection.engine import Analyzer
from lazarus.health.assess import HealthThresholds, assess_gpu
from lazarus.health.models import RECOVERY_ACTION_CODES, GpuHealth, RecoveryAction, Verdict, XidEvent
from lazarus.health.xid import xid_meaning
from lazarus.models.diagnosis import Category, RetryAdvice

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LISTED = [code for code in default_catalogue().xid_codes if code != 154]
UNLISTED = [32, 999]  # 32 is a real Xid (PBDMA error) the catalogue does not list
_AGENT_ACTION = {Verdict.FAILED: "exclude", Verdict.DEGRADED: "watch", Verdict.HEALTHY: "keep"}


class XidVerdict(NamedTuple):
    category: Category | None
    blames_node: bool
    node: str  # exclude | watch | keep


def agent_verdict(code: int, recovery: RecoveryAction | None = None) -> XidVerdict:
    event = XidEvent(gpu=0, uuid="GPU-0", xid=code, time=NOW)
    gpu = assess_gpu(GpuHealth(index=0, uuid="GPU-0", recovery_action=recovery, xid_events=[event]), NOW,
                     HealthThresholds())  # fmt: skip
    node = _AGENT_ACTION[gpu.verdict]
    return XidVerdict(xid_meaning(code).category, node != "keep", node)


def log_verdict(line: str) -> tuple[XidVerdict, str | None]:
    analyzer = Analyzer(known_nodes=["node1"])
    analyzer.feed("syslog", 1, line)
    diagnosis = analyzer.diagnosis()
    claimed = [c.signature for c in analyzer.candidates.values()]
    assert len(claimed) <= 1, claimed
    category = claimed[0].category if claimed else None
    named = "node1" in diagnosis.implicated_nodes or any(" on node1 " in n for n in diagnosis.notes)
    if diagnosis.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES and diagnosis.implicated_nodes:
        node = "exclude"
    elif named and category is Category.HARDWARE:
        node = "watch"
    else:
        node = "keep"
    return XidVerdict(category, node != "keep", node), claimed[0].id if claimed else None


def kernel_line(code: int, text: str = "pid=1201, name=python") -> str:
    return f"May  1 12:00:03 node1 kernel: NVRM: Xid (PCI:0000:3b:00): {code}, {text}"


@pytest.mark.parametrize("code", LISTED + UNLISTED)
def test_agent_and_log_attribution_agree_on_every_xid(code):
    verdict, signature = log_verdict(kernel_line(code))
    assert signature == xid_meaning(code).signature  # the line is read through the entry that lists the code
    assert agent_verdict(code) == verdict


@pytest.mark.parametrize("action", range(len(RECOVERY_ACTION_CODES)))
def test_for_xid_154_both_follow_the_reported_recovery_action(action):
    recovery = RECOVERY_ACTION_CODES[action]
    verdict, signature = log_verdict(kernel_line(154, f"GPU recovery action changed from 0x0 (None) to 0x{action} (x)"))
    agent = agent_verdict(154, recovery)
    if recovery is RecoveryAction.NONE:
        assert signature is None and (agent.blames_node, agent.node) == (verdict.blames_node, verdict.node) == (
            False, "keep")  # fmt: skip
    else:
        assert agent == verdict


def test_the_verdicts_cover_all_three_outcomes():
    outcomes = {agent_verdict(code).node for code in LISTED + UNLISTED}
    assert outcomes == {"exclude", "watch", "keep"}
