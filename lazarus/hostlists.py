"""Bounded hostlist expansion: count the names an expression stands for before expanding it.

A hostlist is compact: ``x[1-99999]`` is ten characters for 99,999 names, and
``a[1-99999],b[1-99999],...`` or ``x[1-99999,1-99999,...]`` multiply that with
every comma. python-hostlist limits one range, not a whole expression, so it
would build hundreds of millions of names from one line of a job's output
before any caller could count them. :func:`expand` measures the expression
from its text first (one pass, no names built) and refuses it when it stands
for more than ``limit`` names.
"""

from __future__ import annotations

import re

import hostlist

MAX_NAMES = 65536  # the largest node list anything in Lazarus expands
_GROUP = re.compile(r"\[([^\[\]]*)\]")
_MAX_DIGITS = 18  # a range bound longer than this is past any cluster (and past int() for 4300+ digits)


def expand(expression: str, limit: int = MAX_NAMES) -> list[str]:
    """The names of ``expression`` in order, duplicates dropped, as :func:`hostlist.expand_hostlist` gives them.

    Raises :class:`hostlist.BadHostlist` for a malformed expression and for one that stands for more
    than ``limit`` names (counted before expanding, duplicates included), so callers keep one except clause.
    """
    if size(expression, limit) > limit:
        raise hostlist.BadHostlist(f"names more than {limit} nodes")
    try:
        return hostlist.expand_hostlist(expression)
    except ValueError:  # a number too long for int(): no node is named that
        raise hostlist.BadHostlist("a number in it is too long") from None


def size(expression: str, limit: int = MAX_NAMES) -> int:
    """How many names ``expression`` stands for at most; any value above ``limit`` means "too many"."""
    total = 0
    for part in _parts(expression):
        count = 1
        for group in _GROUP.findall(part):
            count *= sum(_range_size(item, limit) for item in group.split(","))
            if count > limit:
                return limit + 1
        total += count
        if total > limit:
            return limit + 1
    return total


def _parts(expression: str) -> list[str]:
    """Split at the commas outside brackets, as python-hostlist does."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(expression):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth <= 0:
            parts.append(expression[start:index])
            start = index + 1
    parts.append(expression[start:])
    return [part for part in parts if part]


def _range_size(item: str, limit: int) -> int:
    """Names in one bracket item: ``7`` is one, ``1-100`` a hundred; a malformed item counts one (expansion refuses it)."""
    low, sep, high = item.partition("-")
    if not (sep and low.isascii() and low.isdigit() and high.isascii() and high.isdigit()):
        return 1
    if len(low) > _MAX_DIGITS or len(high) > _MAX_DIGITS:
        return limit + 1
    return max(int(high) - int(low) + 1, 1)
