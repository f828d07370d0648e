"""Implicated nodes are bound to the attempt's allocation: whatever named them, a decision about one attempt
may exclude or drain only that attempt's nodes, never more of them than the allocation holds."""

from __future__ import annotations

from lazarus.models.diagnosis import MAX_OUTSIDE_NAMED, Diagnosis, within_allocation
from lazarus.models.recovery import Attempt


def test_nodes_outside_the_allocation_are_dropped_and_noted():
    diagnosis = Diagnosis(implicated_nodes=["node4", "node2"], notes=["earlier"])
    bound = diagnosis.bound_to_allocation(["node1", "node2"], source="the job's output")
    assert bound.implicated_nodes == ["node2"]
    assert bound.notes == ["earlier", "the job's output named node(s) outside the job's allocation (node4); ignored"]


def test_a_diagnosis_within_the_allocation_is_unchanged():
    diagnosis = Diagnosis(implicated_nodes=["node1"])
    assert diagnosis.bound_to_allocation(["node1", "node2"]) is diagnosis


def test_an_unknown_allocation_implicates_nobody():
    assert Diagnosis(implicated_nodes=["node1"]).bound_to_allocation([]).implicated_nodes == []


def test_the_implicated_list_never_exceeds_the_allocation_and_the_note_stays_short():
    huge = [f"x{i}" for i in range(99_999)] + ["node1", "node1", "node2"]
    kept, outside = within_allocation(huge, ["node1", "node2"])
    assert kept == ["node1", "node2"] and len(outside) == MAX_OUTSIDE_NAMED + 1
    note = Diagnosis(implicated_nodes=huge).bound_to_allocation(["node1", "node2"]).notes[0]
    assert note.endswith("and more); ignored") and len(note) < 200


def test_an_attempt_excludes_or_drains_only_its_own_nodes():
    attempt = Attempt(index=0, nodes=["node1", "node2"])
    assert attempt.bound_to_allocation(["node4", "node2", "node2"]) == ["node2"]
    assert Attempt(index=0).bound_to_allocation(["node1"]) == []
