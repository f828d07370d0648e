"""Every recovery state has a row in the transition table, and illegal moves are refused."""

import pytest

from lazarus.models.recovery import TERMINAL_STATES, RecoveryState
from workflows.phases import ALLOWED_TRANSITIONS, IllegalTransition, check_transition


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
