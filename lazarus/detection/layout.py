"""Which node runs which rank: the :class:`RankLayout` used to name nodes from rank prefixes.

Training logs mostly say *which rank* printed a line (``srun --label`` prefixes
``3: ``, PyTorch's ``[rank3]``), not which node. Slurm's default block
distribution puts ranks ``0..n-1`` on the first node, ``n..2n-1`` on the second,
and so on; a layout built from the job's node list and tasks per node turns a
rank back into a node. A log that prints ``SLURMD_NODENAME`` per rank gives an
exact mapping, which always wins over the computed one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice

import hostlist
from pydantic import BaseModel, ConfigDict, Field, model_validator

from lazarus.errors import ConfigError, shorten


MAX_EXPANDED_NODES = 65536
MAX_SEGMENTS = 16  # literal and bracket runs in one name (Slurm names have one or two)
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _range_names(rangelist: str) -> list[tuple[str, int, int, int]]:
    """``"1-3,07"`` as ``(text, low, high, width)`` ranges (parsed, not expanded)."""
    ranges = []
    for piece in rangelist.split(","):
        found = _RANGE.match(piece)
        if not found:
            raise hostlist.BadHostlist(f"bad range {piece!r}")
        low = int(found.group(1))
        high = int(found.group(2)) if found.group(2) is not None else low
        if high < low:
            raise hostlist.BadHostlist(f"range {piece!r} goes backwards")
        ranges.append((piece, low, high, len(found.group(1))))
    return ranges


def _segments(part: str) -> list[list[tuple[str, int, int, int]] | str]:
    """One top-level part (``x[1-2]y[3]``) as literal strings and parsed range lists."""
    segments: list[list[tuple[str, int, int, int]] | str] = []
    for literal, rangelist in re.findall(r"([^\[\]]*)(?:\[([^\[\]]*)\])?", part):
        if literal:
            segments.append(literal)
        if rangelist:
            segments.append(_range_names(rangelist))
    if len(segments) > MAX_SEGMENTS:
        raise hostlist.BadHostlist(f"more than {MAX_SEGMENTS} bracketed ranges in one name")
    return segments


def _parts(expression: str) -> list[str]:
    """Top-level comma-separated parts (commas inside brackets separate ranges, not parts)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(expression):
        depth += (char == "[") - (char == "]")
        if depth not in (0, 1):
            raise hostlist.BadHostlist("unbalanced or nested brackets")
        if char == "," and depth == 0:
            parts.append(expression[start:i])
            start = i + 1
    if depth:
        raise hostlist.BadHostlist("unbalanced brackets")
    return [p for p in [*parts, expression[start:]] if p]


def _names(segments: list, prefix: str = "") -> Iterator[str]:
    """The names of one part, lazily, leftmost range varying slowest (as Slurm and python-hostlist)."""
    if not segments:
        yield prefix
        return
    head, rest = segments[0], segments[1:]
    if isinstance(head, str):
        yield from _names(rest, prefix + head)
        return
    for _, low, high, width in head:
        for number in range(low, high + 1):
            yield from _names(rest, f"{prefix}{number:0{width}d}")


def iter_nodes(expression: str) -> Iterator[str]:
    """The names of a Slurm hostlist, lazily and without duplicates: ``x[1-99999]`` costs only what is taken.

    The whole expression is parsed (and a malformed one raises :class:`ConfigError`) before the first name.
    """
    try:
        parsed = [_segments(part) for part in _parts(expression.strip())]
    except hostlist.BadHostlist as exc:
        raise ConfigError(f"cannot read node list {shorten(expression, 120)!r}: {exc}") from None
    seen: set[str] = set()
    for segments in parsed:
        for name in _names(segments):
            if name not in seen:
                seen.add(name)
                yield name


def expand_bounded(expression: str, limit: int) -> tuple[list[str], bool]:
    """At most ``limit`` names of a hostlist, and whether it names more; never expands the rest."""
    names = list(islice(iter_nodes(expression), limit + 1))
    if not names:
        raise ConfigError(f"node list {shorten(expression, 120)!r} names no nodes")
    return names[:limit], len(names) > limit


def expand_nodes(expression: str, limit: int = MAX_EXPANDED_NODES) -> list[str]:
    """Expand a Slurm hostlist (``node[1-4],gpu7``), at most ``limit`` names; a malformed one raises
    :class:`ConfigError`."""
    return expand_bounded(expression, limit)[0]


class RankLayout(BaseModel):
    """Rank → node mapping for one job attempt."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[str] = Field(default_factory=list, description="the job's nodes, in Slurm order")
    tasks_per_node: int | None = Field(None, ge=1, description="ranks per node under block distribution")
    explicit: dict[int, str] = Field(default_factory=dict, description="rank → node, learned or given; wins")

    @model_validator(mode="after")
    def _check(self) -> "RankLayout":
        if self.tasks_per_node is not None and not self.nodes:
            raise ValueError("tasks_per_node needs the node list")
        return self

    @classmethod
    def from_slurm(cls, nodelist: str, tasks_per_node: int | None = None) -> "RankLayout":
        """Block distribution over a Slurm node list, e.g. ``from_slurm("node[1-4]", 8)``."""
        return cls(nodes=expand_nodes(nodelist), tasks_per_node=tasks_per_node)

    def node_for_rank(self, rank: int) -> str | None:
        """The node running ``rank``, or None when the layout cannot tell."""
        if rank in self.explicit:
            return self.explicit[rank]
        if rank < 0 or not self.nodes:
            return None
        per_node = self.tasks_per_node or (1 if len(self.nodes) > 1 else None)
        if per_node is None:
            # One node: every rank runs there.
            return self.nodes[0]
        index = rank // per_node
        return self.nodes[index] if index < len(self.nodes) else None
