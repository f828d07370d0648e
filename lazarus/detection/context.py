"""Facts learned from the log itself that help name nodes: rank → node, address → node, the year.

Jobs often print their Slurm environment (``SLURMD_NODENAME=node3`` per rank,
``SLURM_JOB_NODELIST=node[1-4]``) and NCCL prints the address each host uses
(``node3:123:456 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.3<0>``). Learning
them lets a peer address or a rank prefix be turned into a node name even when
the operator passed no layout. Everything here is bounded: at most
``MAX_FACTS`` ranks and addresses are remembered, and a hostlist is never
expanded beyond what is needed.

The job's user controls everything the job prints. When the attempt's
*allocation* is known (telemetry always knows it), a node named in the output
counts only if it is in that allocation: any other name is set aside and
reported in the diagnosis' notes (:meth:`LogContext.outside_notes`), and a
hostlist is read only up to the allocation's size.
"""

from __future__ import annotations

import re

from lazarus.detection.layout import RankLayout, expand_bounded, expand_nodes
from lazarus.detection.locate import NCCL_HOST, RANK_TAG, SRUN_LABEL, LocationKey
from lazarus.detection.prefilter import trie_pattern
from lazarus.errors import ConfigError

MAX_FACTS = 65536
MAX_OUTSIDE_SHOWN = 8  # names outside the allocation quoted in the notes (the rest are counted)
MAX_OUTSIDE_KEPT = 1024  # names outside the allocation remembered for that count
MAX_HOSTLIST_NAMES = 1024  # names read from one hostlist in the output when the allocation is not known

# Literal keywords the prefilter must let through so that these lines are seen.
CONTEXT_KEYWORDS = (
    "SLURMD_NODENAME=",
    "SLURM_JOB_NODELIST=",
    "SLURM_NODELIST=",
    "SLURM_TASKS_PER_NODE=",
    "SLURM_NTASKS_PER_NODE=",
    "Bootstrap : Using",
    "NET/IB : Using",
    "NET/Socket : Using",
    "localGid",
)

_NODENAME = re.compile(r"\bSLURMD_NODENAME=([A-Za-z][\w.-]*)")
_NODELIST = re.compile(r"\bSLURM_(?:JOB_)?NODELIST=([\w.\[\],-]+)")
_TASKS = re.compile(r"\bSLURM_N?TASKS_PER_NODE=(\d+)")
_NCCL_ADDR = re.compile(r"(?:Bootstrap|NET/IB|NET/Socket) : Using .*?(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})<")
_LOCAL_GID = re.compile(r"localGid (?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})")


class LogContext:
    """Node-naming facts: the operator's layout plus what the log taught us."""

    def __init__(
        self,
        layout: RankLayout | None = None,
        known_nodes: list[str] | None = None,
        allocation: list[str] | None = None,
    ) -> None:
        self.layout = layout or RankLayout()
        self.allocation = frozenset(allocation) if allocation is not None else None
        self.outside: set[str] = set()  # names seen outside the allocation (at most MAX_OUTSIDE_KEPT)
        self.hostlist_cut = False  # a hostlist named more nodes than were read
        self.known = frozenset(known_nodes or []) | frozenset(self.layout.nodes)
        self.learned_ranks: dict[int, str] = {}
        self.addresses: dict[str, str] = {}
        self.year = 2000
        self._log_nodes: list[str] = []
        self._log_tasks: int | None = None
        self.unmapped_ranks: set[int] = set()
        self._known_regex: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)

    def node_named_in(self, text: str) -> str | None:
        """A known node named as a word in ``text`` ('-' and '.' count as word boundaries)."""
        known, regex = self._known_regex
        if known is not self.known:
            # Rebuilt only when the known set changes (a new node learned), not per line. A trie regex
            # finds candidates at C speed; the word boundary is checked here, on the few hits.
            regex = re.compile(trie_pattern(self.known, longest=True)) if self.known else None
            self._known_regex = (self.known, regex)
        if regex is None:
            return None
        position = 0
        while (found := regex.search(text, position)) is not None:
            start, end = found.span()
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
                return found.group()
            position = start + 1
        return None

    def learn(self, line: str) -> None:
        """Remember layout facts printed in ``line`` (cheap: called for prefiltered lines only)."""
        if "SLURM" in line:
            self._learn_slurm(line)
        if " : Using" in line or "localGid" in line:
            host = NCCL_HOST.search(line)
            addr = _NCCL_ADDR.search(line) or _LOCAL_GID.search(line)
            if host and addr and len(self.addresses) < MAX_FACTS:
                self.addresses.setdefault(addr.group(1), host.group(1))

    def _learn_slurm(self, line: str) -> None:
        if found := _NODENAME.search(line):
            label = SRUN_LABEL.match(line) or RANK_TAG.search(line)
            if label and len(self.learned_ranks) < MAX_FACTS:
                self.learned_ranks[int(label.group(1))] = found.group(1)
            self.known = self.known | {found.group(1)}
        if (found := _NODELIST.search(line)) and not self._log_nodes:
            try:
                self._log_nodes = expand_nodes(found.group(1), MAX_FACTS)
            except ConfigError:
                return
            self.known = self.known | frozenset(self._log_nodes)
        if (found := _TASKS.search(line)) and self._log_tasks is None:
            self._log_tasks = max(1, int(found.group(1)))

    def _rank_node(self, rank: int) -> str | None:
        if rank in self.learned_ranks:
            return self.learned_ranks[rank]
        node = self.layout.node_for_rank(rank)
        if node is None and self._log_nodes and not self.layout.nodes:
            node = RankLayout(nodes=self._log_nodes, tasks_per_node=self._log_tasks).node_for_rank(rank)
        return node

    def resolve(self, keys: tuple[LocationKey, ...], file: str) -> list[str]:
        """Node names for one hit: the first key that resolves wins; the file name is the last resort."""
        unmapped: list[int] = []
        for kind, value in keys:
            if kind == "nodes":
                try:
                    names, cut = expand_bounded(str(value), self._hostlist_limit())
                except ConfigError:
                    continue
                self.hostlist_cut |= cut
                return self._allocated(names)
            if kind == "node":
                return self._allocated([self._canonical(str(value))])
            if kind == "addr" and str(value) in self.addresses:
                return self._allocated([self.addresses[str(value)]])
            if kind == "rank":
                node = self._rank_node(int(value))
                if node:
                    return self._allocated([node])
                unmapped.append(int(value))
        from_file = self.node_named_in(file.rsplit("/", 1)[-1])
        if from_file:
            return self._allocated([from_file])
        if unmapped and len(self.unmapped_ranks) < 64:
            self.unmapped_ranks.add(unmapped[0])
        return []

    def _hostlist_limit(self) -> int:
        """How many names of one hostlist are read: no more than the allocation holds, when it is known."""
        return max(1, len(self.allocation)) if self.allocation is not None else MAX_HOSTLIST_NAMES

    def _allocated(self, names: list[str]) -> list[str]:
        """``names`` that are in the allocation (all of them when it is not known); the others are noted."""
        if self.allocation is None:
            return names
        kept = [n for n in names if n in self.allocation]
        for name in names:
            if name not in self.allocation and len(self.outside) < MAX_OUTSIDE_KEPT:
                self.outside.add(name)
        return kept

    def outside_notes(self) -> list[str]:
        """What the output named outside the allocation, for the diagnosis' notes (empty when nothing)."""
        notes = []
        if self.outside:
            shown = ", ".join(sorted(self.outside)[:MAX_OUTSIDE_SHOWN])
            rest = len(self.outside) - MAX_OUTSIDE_SHOWN
            more = (
                "" if rest <= 0 else f" and {'at least ' if len(self.outside) == MAX_OUTSIDE_KEPT else ''}{rest} more"
            )
            notes.append(
                f"the job's output names node(s) outside its allocation ({shown}{more}); ignored: "
                "a job's output can implicate only its own nodes"
            )
        if self.hostlist_cut:
            notes.append(
                "a hostlist in the job's output names more nodes than "
                + (
                    f"its allocation holds ({len(self.allocation)})"
                    if self.allocation is not None
                    else f"{MAX_HOSTLIST_NAMES}"
                )
                + "; only that many were read"
            )
        return notes

    def _canonical(self, host: str) -> str:
        """``node3.cluster.local`` is ``node3`` when the short name is a known node."""
        short = host.split(".", 1)[0]
        return short if short in self.known else host
