"""Which node runs which rank: the :class:`RankLayout` used to name nodes from rank prefixes.

Training logs mostly say *which rank* printed a line (``srun --label`` prefixes
``3: ``, PyTorch's ``[rank3]``), not which node. Slurm's default block
distribution puts ranks ``0..n-1`` on the first node, ``n..2n-1`` on the second,
and so on; a layout built from the job's node list and tasks per node turns a
rank back into a node. A log that prints ``SLURMD_NODENAME`` per rank gives an
exact mapping, which always wins over the computed one.
"""

from __future__ import annotations

from collections.abc import Iterator

import hostlist
from pydantic import BaseModel, ConfigDict, Field, model_validator

from lazarus import hostlists
from lazarus.errors import ConfigError, shorten

MAX_EXPANDED_NODES = hostlists.MAX_NAMES


def iter_nodes(expression: str) -> Iterator[str]:
    """The names of a Slurm hostlist, lazily (see :func:`lazarus.hostlists.iter_names`); a malformed one
    raises :class:`ConfigError` before the first name."""
    try:
        names = hostlists.iter_names(expression)
        first = next(names, None)
    except hostlist.BadHostlist as exc:
        raise ConfigError(f"cannot read node list {shorten(expression, 120)!r}: {exc}") from None
    if first is not None:
        yield first
        yield from names


def expand_bounded(expression: str, limit: int) -> tuple[list[str], bool]:
    """At most ``limit`` names of a hostlist, and whether it names more; never expands the rest."""
    try:
        names, more = hostlists.expand_bounded(expression, limit)
    except hostlist.BadHostlist as exc:
        raise ConfigError(f"cannot read node list {shorten(expression, 120)!r}: {exc}") from None
    if not names:
        raise ConfigError(f"node list {shorten(expression, 120)!r} names no nodes")
    return names, more


def expand_nodes(expression: str, limit: int = MAX_EXPANDED_NODES) -> list[str]:
    """Expand a Slurm hostlist (``node[1-4],gpu7``); a malformed one, or one naming more than ``limit``
    nodes, raises :class:`ConfigError` (only the first ``limit + 1`` names are ever built)."""
    names, more = expand_bounded(expression, limit)
    if more:
        raise ConfigError(f"node list {shorten(expression, 120)!r} names more than {limit} nodes")
    return names


class RankLayout(BaseModel):
    """Rank → node mapping for one job attempt."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[str] = Field(default_factory=list, description="the job's nodes, in Slurm order")
    tasks_per_node: int | None = Field(None, ge=1, description="ranks per node under block distribution")
    explicit: dict[int, str] = Field(default_factory=dict, description="rank → node, learned or given; wins")

    @model_validator(mode="after")
    def _check(self) -> RankLayout:
        if self.tasks_per_node is not None and not self.nodes:
            raise ValueError("tasks_per_node needs the node list")
        return self

    @classmethod
    def from_slurm(cls, nodelist: str, tasks_per_node: int | None = None) -> RankLayout:
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
