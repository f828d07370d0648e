"""One decision table for retry advice, over (failure kind, category, node evidence, recurrence).

Signatures say *what* failed (kind and category) and whether the line names a
node at fault; what to *do* about it follows from this table, so the answer is
the same for every signature of one kind. A signature may still set
``retry_advice`` itself, but only with an ``advice_reason`` when its advice
differs from the table (checked when the catalogue loads).

The rows, first match wins:

=====================================  ===========================  ==========================================
condition                              advice                       why
=====================================  ===========================  ==========================================
recurrence, category not hardware      stop                         the same failure again is not transient
category hardware                      retry_excluding_nodes        the node is the suspect, named or not
node evidence (the line blames a node) retry_excluding_nodes        the node is at fault; restart without it
category application                   stop                         a bug or a bad setting fails every retry
otherwise (infrastructure, system      retry_same_nodes             transient: the same nodes may well work
software, unknown; crash or hang)
=====================================  ===========================  ==========================================

``recurrence`` is the caller's knowledge that the same signature already
failed the previous attempt; a single log says nothing about it (False).
"""

from __future__ import annotations

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice

ROWS: tuple[tuple[str, RetryAdvice], ...] = (
    ("recurrence of a non-hardware failure", RetryAdvice.STOP),
    ("hardware", RetryAdvice.RETRY_EXCLUDING_NODES),
    ("node evidence", RetryAdvice.RETRY_EXCLUDING_NODES),
    ("application", RetryAdvice.STOP),
    ("otherwise", RetryAdvice.RETRY_SAME_NODES),
)


def table_row(kind: FailureKind, category: Category, node_evidence: bool, recurrence: bool = False) -> int:
    """Index into :data:`ROWS` of the row that decides (kind is part of the key; no row depends on it yet)."""
    del kind  # crash and hang get the same advice: a hang is recovered by a restart like a crash
    if recurrence and category is not Category.HARDWARE:
        return 0
    if category is Category.HARDWARE:
        return 1
    if node_evidence:
        return 2
    if category is Category.APPLICATION:
        return 3
    return 4


def advise(kind: FailureKind, category: Category, node_evidence: bool, recurrence: bool = False) -> RetryAdvice:
    """The table's retry advice for a failure."""
    return ROWS[table_row(kind, category, node_evidence, recurrence)][1]
