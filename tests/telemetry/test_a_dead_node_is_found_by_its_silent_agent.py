"""Node liveness (lazarus/telemetry/liveness.py): a node whose agent fell silent while its peers answer, under a job
whose progress stopped, is a node failure; a blind spell or an agent that died under a healthy job is not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.models.diagnosis import Category, EvidenceSource, FailureKind, RetryAdvice
from lazarus.telemetry.liveness import AgentSightings, lost_nodes, node_failure, stalled

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SILENCE = timedelta(seconds=5)
NODES = ["node1", "node2", "node3", "node4"]


def sightings(silent: dict[str, float], at: float = 10.0) -> AgentSightings:
    """Every node asked once a second up to ``at``; a node in ``silent`` stopped answering at that second."""
    s = AgentSightings()
    for second in range(int(at) + 1):
        for node in NODES:
            s.record(node, T0 + timedelta(seconds=second), answered=second < silent.get(node, 1e9))
    return s


def now(at: float = 10.0) -> datetime:
    return T0 + timedelta(seconds=at)


def test_a_node_whose_agent_is_silent_for_the_silence_while_the_others_answer_is_lost() -> None:
    assert lost_nodes(sightings({"node2": 5}), now(), SILENCE) == ["node2"]


def test_an_agent_silent_for_less_than_the_silence_is_not_yet_lost() -> None:
    assert lost_nodes(sightings({"node2": 7}), now(), SILENCE) == []


def test_half_the_agents_silent_at_once_is_a_blind_spell_not_node_failures() -> None:
    assert lost_nodes(sightings({"node1": 3, "node2": 3}), now(), SILENCE) == []
    assert lost_nodes(sightings(dict.fromkeys(NODES, 3)), now(), SILENCE) == []


def test_an_agent_that_never_answered_is_no_evidence() -> None:
    s = sightings({})
    s.record("node9", now(), answered=False)
    s.record("node9", now(-20), answered=False)
    assert lost_nodes(s, now(), SILENCE) == []


def test_a_job_on_a_lost_node_whose_progress_stopped_has_a_node_failure_excluding_that_node() -> None:
    s = sightings({"node2": 4})
    diagnosis = node_failure(["node1", "node2"], ["node2"], s, now(4.2), timedelta(seconds=0.5), now())
    assert diagnosis is not None
    assert diagnosis.failure_kind == FailureKind.CRASH
    assert diagnosis.category == Category.INFRASTRUCTURE
    assert diagnosis.retry_advice == RetryAdvice.RETRY_EXCLUDING_NODES
    assert diagnosis.implicated_nodes == ["node2"]
    assert diagnosis.implicated_by == EvidenceSource.NODE_AGENT


def test_a_job_still_progressing_on_a_node_whose_agent_died_is_left_alone() -> None:
    s = sightings({"node2": 4})
    assert node_failure(["node1", "node2"], ["node2"], s, now(9.5), timedelta(seconds=0.5), now()) is None


def test_a_job_that_never_printed_progress_is_left_to_the_scheduler() -> None:
    assert node_failure(["node1", "node2"], ["node2"], sightings({"node2": 4}), None, None, now()) is None


def test_a_job_on_other_nodes_is_not_hit_by_a_lost_node() -> None:
    assert node_failure(["node3", "node4"], ["node2"], sightings({"node2": 4}), now(1), None, now()) is None


def test_a_slow_stepping_job_is_stalled_only_after_two_of_its_slowest_steps() -> None:
    assert not stalled(now(0), timedelta(seconds=8), now(10))
    assert stalled(now(0), timedelta(seconds=4), now(10))
    assert not stalled(now(8), None, now(10))
