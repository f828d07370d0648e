"""The restart names as lost only the nodes the node agents' liveness found dead: only those may be set DOWN when
they hold the requeued job (lazarus/slurm/node_down.py); a job's own output never names a node lost."""

from __future__ import annotations

from datetime import UTC, datetime

from lazarus.models.diagnosis import NODE_LOST_SIGNATURE, EvidenceSource
from lazarus.models.recovery import Advice, AdviceAction
from workflows.acting import lost_nodes


def advice(signature: str, source: EvidenceSource) -> Advice:
    return Advice(
        generation=1,
        attempt=0,
        action=AdviceAction.RESTART,
        exclude_nodes=["node2"],
        reason="test",
        created_at=datetime(2026, 11, 30, tzinfo=UTC),
        signature=signature,
        implicated_by=source,
    )


def test_only_a_node_lost_by_the_agents_liveness_is_named_lost_in_the_restart() -> None:
    assert lost_nodes(advice(NODE_LOST_SIGNATURE, EvidenceSource.NODE_AGENT)) == ["node2"]
    assert lost_nodes(advice(NODE_LOST_SIGNATURE, EvidenceSource.JOB_OUTPUT)) == []
    assert lost_nodes(advice("xid_79_fallen_off_bus", EvidenceSource.NODE_AGENT)) == []
