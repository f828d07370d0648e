"""Strategies shared by the property tests: hostile text, JSON of any shape, Slurm-like values."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import strategies as st

from lazarus.models.slurm import JobState

# Text a job or a broken command may print: any code point, NUL, escapes, line separators.
HOSTILE_SNIPPETS = (
    "\x00",
    "\x1b[2J",
    "\x1b]0;pwned\x07",
    "\r",
    "\u2028",
    "\x85",
    "\ufeff",
    "$(reboot)",
    "`id`",
    "; rm -rf /",
    "Restarts=9 StdOut=/etc/shadow",
    "JobState=COMPLETED",
    "\udcff",
    "9" * 5000,
    "²³",
    "١٢٣",
    "[1-99999]",
)
hostile_text = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(HOSTILE_SNIPPETS), st.text(max_size=8)), max_size=12).map("".join),
)

huge_ints = st.one_of(
    st.integers(),
    st.integers(min_value=2**31 - 2, max_value=2**31 + 2),
    st.sampled_from([2**63, -(2**63), 2**64 + 1, 10**30, -1]),
)

json_scalars = st.one_of(st.none(), st.booleans(), huge_ints, st.floats(allow_nan=False), hostile_text)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)

job_states = st.sampled_from(list(JobState))

# Slurm node names and hostlists that Slurm itself would print.
node_prefixes = st.sampled_from(["node", "gpu", "n", "dgx-a", "rack1-"])
node_names = st.builds(lambda prefix, number: f"{prefix}{number}", node_prefixes, st.integers(0, 2000))
node_sets = st.lists(node_names, max_size=12, unique=True)

# scontrol/sacct print naive local times with second precision.
slurm_times = st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2099, 12, 31)).map(
    lambda t: t.replace(microsecond=0)
)


def words(alphabet: st.SearchStrategy[str], max_words: int = 4) -> st.SearchStrategy[str]:
    """A few non-empty words from ``alphabet`` joined by single spaces."""
    return st.lists(st.text(alphabet, min_size=1, max_size=10), min_size=1, max_size=max_words).map(" ".join)


def local_to_utc(naive: datetime) -> datetime:
    """What the parsers make of a naive local time: the same instant, timezone-aware."""
    return naive.astimezone(UTC)
