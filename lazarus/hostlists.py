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
from collections.abc import Iterator
from itertools import islice

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
        names: list[str] = hostlist.expand_hostlist(expression)
        return names
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


# ---- lazy expansion: names one at a time, so a caller that needs only the first few never builds the rest

MAX_SEGMENTS = 16  # literal and bracket runs in one name (Slurm names have one or two)
_RANGE = re.compile(rf"^(\d{{1,{_MAX_DIGITS}}})(?:-(\d{{1,{_MAX_DIGITS}}}))?$")
_Segment = list[tuple[int, int, int]] | str


def iter_names(expression: str) -> Iterator[str]:
    """The names of ``expression`` lazily, duplicates dropped, in python-hostlist's order:
    ``x[1-99999]`` costs only the names taken. The whole expression is parsed first, so a malformed one
    raises :class:`hostlist.BadHostlist` before the first name."""
    parsed = [_segments(part) for part in _strict_parts(expression.strip())]
    seen: set[str] = set()
    for segments in parsed:
        for name in _names(segments):
            if name not in seen:
                seen.add(name)
                yield name


def expand_bounded(expression: str, limit: int) -> tuple[list[str], bool]:
    """At most ``limit`` names of ``expression``, and whether it names more; the rest is never expanded."""
    names = list(islice(iter_names(expression), limit + 1))
    return names[:limit], len(names) > limit


def _strict_parts(expression: str) -> list[str]:
    """Top-level comma-separated parts; nested or unbalanced brackets are malformed."""
    depth = 0
    for char in expression:
        depth += (char == "[") - (char == "]")
        if depth not in (0, 1):
            raise hostlist.BadHostlist("unbalanced or nested brackets")
    if depth:
        raise hostlist.BadHostlist("unbalanced brackets")
    return _parts(expression)


def _segments(part: str) -> list[_Segment]:
    """One part (``x[1-2]y[3]``) as literal strings and parsed ranges ``(low, high, width)``."""
    segments: list[_Segment] = []
    for literal, rangelist in re.findall(r"([^\[\]]*)(?:\[([^\[\]]*)\])?", part):
        if literal:
            segments.append(literal)
        if rangelist:
            segments.append([_range(piece) for piece in rangelist.split(",")])
    if len(segments) > MAX_SEGMENTS:
        raise hostlist.BadHostlist(f"more than {MAX_SEGMENTS} bracketed ranges in one name")
    return segments


def _range(piece: str) -> tuple[int, int, int]:
    found = _RANGE.match(piece)
    if not found:
        raise hostlist.BadHostlist(f"bad range {piece!r}")
    low = int(found.group(1))
    high = int(found.group(2)) if found.group(2) is not None else low
    if high < low:
        raise hostlist.BadHostlist(f"range {piece!r} goes backwards")
    return low, high, len(found.group(1))


def _names(segments: list[_Segment], prefix: str = "") -> Iterator[str]:
    """The names of one part, the leftmost range varying slowest."""
    if not segments:
        yield prefix
        return
    head, rest = segments[0], segments[1:]
    if isinstance(head, str):
        yield from _names(rest, prefix + head)
        return
    for low, high, width in head:
        for number in range(low, high + 1):
            yield from _names(rest, f"{prefix}{number:0{width}d}")
