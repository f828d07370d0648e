"""A workflow run started before a decision patch keeps the old rule (no server).

The replay of ``tests/histories/node_outside_allocation@2ab9690.json`` shows the same on a real history: a run
that drained a node outside its allocation before the upgrade replays without a nondeterminism error.
"""

from __future__ import annotations

from datetime import UTC, datetime

from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from lazarus.models.policy import Mode, Policy
from lazarus.models.recovery import Anomaly, Attempt, JobRecoveryInput, RecoveryState
from workflows.decision import decide_advice
from workflows.effects import Decide, Isolate, Requeue
from workflows.patches import BOUND_TO_ALLOCATION, DECISION_PATCHES
from workflows.transitions import apply

T = datetime(2026, 1, 1, tzinfo=UTC)
OLD_RUN = frozenset({BOUND_TO_ALLOCATION})


def xid_on(*nodes: str) -> Anomaly:
    diag = Diagnosis(
        failure_kind=FailureKind.CRASH,
        category=Category.HARDWARE,
        signature="nvrm_xid_79",
        retry_advice=RetryAdvice.RETRY_EXCLUDING_NODES,
        implicated_nodes=list(nodes),
    )
    return Anomaly(attempt=0, kind=FailureKind.CRASH, diagnosis=diag, observed_at=T)


def on(*nodes: str) -> list[Attempt]:
    return [Attempt(index=0, nodes=list(nodes), started_at=T)]


def test_a_run_from_before_the_allocation_bound_still_excludes_a_node_outside_it():
    assert decide_advice(xid_on("node4"), on("node1", "node2"), Policy()).exclude_nodes == []
    old = decide_advice(xid_on("node4"), on("node1", "node2"), Policy(), OLD_RUN)
    assert (old.exclude_nodes, old.drain_nodes) == (["node4"], ["node4"])


def test_a_run_from_before_the_allocation_bound_blames_every_named_node_when_the_allocation_is_unknown():
    assert decide_advice(xid_on("node2", "node3"), on(), Policy()).exclude_nodes == []
    assert decide_advice(xid_on("node2", "node3"), on(), Policy(), OLD_RUN).exclude_nodes == ["node2", "node3"]


def test_both_rules_agree_inside_the_allocation():
    new = decide_advice(xid_on("node2", "node9"), on("node1", "node2"), Policy())
    old = decide_advice(xid_on("node2", "node9"), on("node1", "node2"), Policy(), OLD_RUN)
    assert new == old and new.exclude_nodes == ["node2"]


def test_the_decide_input_carries_the_patches_the_run_predates_into_the_decision():
    state = JobRecoveryInput(
        cluster="c", job_id=1, cluster_mode=Mode.ACT, state=RecoveryState.WATCHING, attempts=on("node1", "node2")
    )
    _, new = apply(state, Decide(xid_on("node4")), T)
    _, old = apply(state, Decide(xid_on("node4"), unpatched=OLD_RUN), T)
    assert [type(e) for e in new if isinstance(e, (Isolate, Requeue))] == [Requeue]
    assert [type(e) for e in old if isinstance(e, (Isolate, Requeue))] == [Isolate, Requeue]


def test_every_decision_patch_id_is_unique():
    assert len(set(DECISION_PATCHES)) == len(DECISION_PATCHES)
