"""Every recovery state has a row in the transition table, the table has exactly the edges the code takes,
illegal moves are refused, and the documented state diagram is the table's."""

import importlib.util
from pathlib import Path

import pytest

from lazarus.models.recovery import TERMINAL_STATES, RecoveryState
from workflows.phases import ALLOWED_TRANSITIONS, TRANSITIONS, IllegalTransition, check_transition

GENERATOR = Path(__file__).resolve().parents[2] / "scripts" / "gen_state_diagram.py"


def test_every_state_has_a_row():
    assert set(ALLOWED_TRANSITIONS) == set(RecoveryState)


def test_terminal_states_have_no_way_out():
    for state in TERMINAL_STATES:
        assert ALLOWED_TRANSITIONS[state] == frozenset()


def test_every_non_terminal_state_can_reach_a_terminal_state():
    for state in set(RecoveryState) - TERMINAL_STATES:
        seen, todo = set(), [state]
        while todo:
            cur = todo.pop()
            seen.add(cur)
            todo.extend(ALLOWED_TRANSITIONS[cur] - seen)
        assert seen & TERMINAL_STATES, state


def test_illegal_transition_is_refused():
    with pytest.raises(IllegalTransition, match="from completed to acting"):
        check_transition(RecoveryState.COMPLETED, RecoveryState.ACTING)
    check_transition(RecoveryState.WATCHING, RecoveryState.WATCHING)


def test_the_table_has_exactly_these_edges():
    S = RecoveryState
    edges = {(a, b) for a, targets in ALLOWED_TRANSITIONS.items() for b in targets}
    assert edges == {
        (S.WATCHING, S.SUSPECTED),
        (S.WATCHING, S.COMPLETED),
        (S.WATCHING, S.STOPPED),
        (S.WATCHING, S.IGNORED),
        (S.SUSPECTED, S.AWAITING_APPROVAL),
        (S.SUSPECTED, S.ACTING),
        (S.SUSPECTED, S.STOPPED),
        (S.SUSPECTED, S.WATCHING),
        (S.AWAITING_APPROVAL, S.ACTING),
        (S.AWAITING_APPROVAL, S.WATCHING),
        (S.AWAITING_APPROVAL, S.STOPPED),
        (S.ACTING, S.VERIFYING),
        (S.ACTING, S.FAILED),
        (S.ACTING, S.COMPLETED),
        (S.ACTING, S.STOPPED),
        (S.ACTING, S.WATCHING),  # the stop's fresh read found the job on another attempt
        (S.VERIFYING, S.WATCHING),
        (S.VERIFYING, S.SUSPECTED),
        (S.VERIFYING, S.STOPPED),
        (S.VERIFYING, S.COMPLETED),
    }


def test_every_edge_says_what_causes_it():
    assert all(label.strip() for edges in TRANSITIONS.values() for label in edges.values())


def test_the_state_diagram_in_the_architecture_doc_is_generated_from_the_table():
    spec = importlib.util.spec_from_file_location("gen_state_diagram", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = module.DOC.read_text()
    assert module.updated(text) == text, "run python scripts/gen_state_diagram.py"
    for source, edges in TRANSITIONS.items():
        for target in edges:
            assert f"{source.value.replace('-', '_')} --> {target.value.replace('-', '_')}:" in text
