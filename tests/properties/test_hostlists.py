"""Hostlists: expansion round-trips, never raises but the caller's typed error, and is bounded.

A hostlist is compact text for a possibly huge list: ``x[1-99999]`` is ten
characters for 99,999 names, and ``a[1-99999],b[1-99999],...`` or
``x[1-99999,1-99999,...]`` multiply that per comma. Every expansion in the
project (command arguments, Slurm output, node names printed in a job's log)
refuses an expression naming more than its limit before allocating the names.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import hostlist
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lazarus import hostlists
from lazarus.detection.layout import expand_nodes as expand_layout_nodes
from lazarus.errors import ConfigError, LazarusError
from lazarus.slurm import validate
from lazarus.slurm.errors import InvalidArgumentError, MalformedOutputError
from lazarus.slurm.parse import expand_nodes as expand_slurm_nodes
from tests.properties.strategies import HOSTILE_SNIPPETS, hostile_text, node_sets

# Text that looks like a hostlist: names, brackets, ranges, commas, and a little of everything else.
hostlist_like = st.lists(st.sampled_from([*"ab09[]-,.", "[1-99999]", *HOSTILE_SNIPPETS]), max_size=20).map("".join)

HUGE = {
    "one range": "x[1-99999]",
    "many parts": ",".join(f"p{i}[1-99999]" for i in range(60)),
    "many ranges in one bracket": "x[" + ",".join(["1-99999"] * 60) + "]",
    "many brackets in one name": "x" + "[1-9]" * 12,
    "the same range repeated": ",".join(["x[1-99999]"] * 60),
    "a number past int()": "x[1-" + "9" * 5000 + "]",
}
EXPANSIONS: dict[str, tuple[Callable[[str], list[str]], type[LazarusError]]] = {
    "command arguments": (lambda text: validate.node_names([text]), InvalidArgumentError),
    "Slurm output": (expand_slurm_nodes, MalformedOutputError),
    "a job's log or --nodes": (expand_layout_nodes, ConfigError),
}
PEAK_BYTES = 64 << 20  # a 100,000-name expansion needs ~10 MB; the huge ones above would need gigabytes


@given(node_sets.filter(bool))
def test_a_collected_hostlist_expands_to_the_same_names(names):
    assert validate.node_names([validate.hostlist_expr(names)]) == validate.node_names(names)
    assert set(expand_slurm_nodes(hostlist.collect_hostlist(names))) == set(names)


@given(st.lists(st.one_of(hostlist_like, hostile_text), max_size=3))
@example(["node;rm -rf /"])
@example(["node[1-3],$(reboot)"])
def test_command_arguments_are_valid_names_or_refused(texts):
    try:
        names = validate.node_names(texts)
    except InvalidArgumentError:
        return
    assert names == sorted(set(names), key=validate._natural_key)
    assert len(names) <= validate._MAX_NODES
    assert all(validate._NODE_NAME.match(name) for name in names)


@pytest.mark.parametrize("where", EXPANSIONS)
@given(text=st.one_of(hostlist_like, hostile_text))
def test_any_text_expands_or_gives_the_callers_typed_error(where, text):
    expand, error = EXPANSIONS[where]
    try:
        names = expand(text)
    except error:
        return
    assert all(isinstance(name, str) for name in names)


@pytest.mark.parametrize("where", EXPANSIONS)
@pytest.mark.parametrize("shape", HUGE)
def test_a_huge_hostlist_is_refused_without_allocating_it(where, shape):
    expand, error = EXPANSIONS[where]
    tracemalloc.start()
    try:
        with pytest.raises(error):
            expand(HUGE[shape])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES


ranges = st.builds(
    lambda low, width: f"{low}-{low + width}" if width else str(low), st.integers(0, 500), st.integers(0, 60)
)
expressions = st.lists(
    st.builds(
        lambda prefix, groups: prefix + "".join(f"[{','.join(items)}]" for items in groups),
        st.sampled_from(["n", "gpu", "a-b"]),
        st.lists(st.lists(ranges, min_size=1, max_size=3), max_size=2),
    ),
    min_size=1,
    max_size=4,
).map(",".join)


@given(expressions)
def test_the_measured_size_is_never_below_the_expanded_count(expression):
    try:
        names = hostlist.expand_hostlist(expression)
    except hostlist.BadHostlist:
        return
    assert len(names) <= hostlists.size(expression)
    assert hostlists.expand(expression, limit=max(len(names), hostlists.size(expression))) == names
