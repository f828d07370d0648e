"""What the analyser remembers about one signature's matches, and what the verdict reasons over.

Kept apart from :mod:`.engine` (which fills candidates in) and :mod:`.verdict`
(which reads them) so that neither of the two imports the other.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from lazarus.detection.catalogue import Signature
from lazarus.detection.context import LogContext
from lazarus.detection.locate import LocationKey
from lazarus.models.diagnosis import Evidence


@dataclass
class Candidate:
    """Everything remembered about one signature's matches in the input."""

    signature: Signature
    count: int = 0
    first_time: float | None = None
    first_order: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    locations: Counter[tuple[str, tuple[LocationKey, ...]]] = field(default_factory=Counter)
    timed_files: set[str] = field(default_factory=set)


class Findings(Protocol):
    """The state of an analysis that the verdict needs (the :class:`~.engine.Analyzer` provides it)."""

    candidates: dict[str, Candidate]
    context: LogContext
    lines_seen: int
    benign_lines: int
    notes: list[str]
