"""The streaming analyser: feed it log lines, ask it for a :class:`Diagnosis`.

Memory is bounded whatever the input size: one :class:`Candidate` per
signature (the catalogue is finite), at most ``MAX_EVIDENCE_PER_CANDIDATE``
evidence lines and ``MAX_LOCATIONS`` distinct places per candidate, and lines
cut to ``MAX_LINE_CHARS``. Reasoning about the failure as a whole (which
candidate is the root, which are victims) happens in :mod:`.verdict` when the
diagnosis is asked for, so that facts learned late in the log (the rank layout,
NCCL addresses) still help name the node.
"""

from __future__ import annotations

from lazarus.detection.candidate import Candidate
from lazarus.detection.catalogue import Catalogue, Role, default_catalogue
from lazarus.detection.context import CONTEXT_KEYWORDS, LogContext
from lazarus.detection.layout import RankLayout
from lazarus.detection.locate import locate, parse_timestamp
from lazarus.detection.normalize import normalize
from lazarus.detection.prefilter import Prefilter
from lazarus.detection.unraisable import NOTE_ID, UnraisableBlock
from lazarus.detection.verdict import conclude
from lazarus.errors import shorten
from lazarus.models.diagnosis import Diagnosis, Evidence

MAX_LINE_CHARS = 64 * 1024
MAX_EVIDENCE_PER_CANDIDATE = 5
MAX_LOCATIONS = 256
MAX_NOTES = 20
EVIDENCE_TEXT_CHARS = 500

_PREFILTERS: dict[int, tuple[Catalogue, Prefilter]] = {}


def prefilter_for(catalogue: Catalogue) -> Prefilter:
    """The keyword prefilter of a catalogue (plus the layout-learning keywords), built once per catalogue."""
    cached = _PREFILTERS.get(id(catalogue))
    if cached is None or cached[0] is not catalogue:
        cached = _PREFILTERS[id(catalogue)] = (catalogue, Prefilter([*catalogue.trigger_keywords, *CONTEXT_KEYWORDS]))
    return cached[1]


class Analyzer:
    """Streaming diagnosis of one failure from any number of log files.

    Call :meth:`feed` for every line (any order of files; line numbers are
    1-based), then :meth:`diagnosis`. It never raises on odd input: overlong
    lines are cut, and problems reading input are recorded with :meth:`note`.
    With ``allocation`` (the attempt's nodes), a node named in the input counts
    only if it is one of them; the others are reported in the diagnosis' notes.
    """

    def __init__(
        self,
        catalogue: Catalogue | None = None,
        layout: RankLayout | None = None,
        known_nodes: list[str] | None = None,
        allocation: list[str] | None = None,
    ) -> None:
        self.catalogue = catalogue or default_catalogue()
        self.prefilter = prefilter_for(self.catalogue)
        self._match = self.catalogue.matcher.match
        self.context = LogContext(layout, known_nodes, allocation)
        self.candidates: dict[str, Candidate] = {}
        self.lines_seen = 0
        self.benign_lines = 0
        self.notes: list[str] = []
        self._order = 0
        self._unraisable = UnraisableBlock()

    def feed(self, file: str, line_no: int, text: str) -> None:
        """Consider one line."""
        self.lines_seen += 1
        if self.prefilter.text.search(text, 0, MAX_LINE_CHARS) is not None:
            self.feed_candidate(file, line_no, text)

    def feed_candidate(self, file: str, line_no: int, text: str) -> None:
        """Consider a line already known to contain a keyword (the file scanner's fast path)."""
        text = text[:MAX_LINE_CHARS].rstrip("\r\n")
        self.context.learn(text)
        # Match the message without tool prefixes (srun/mpirun/torchrun labels, timestamps, syslog host);
        # the original line is tried too, for patterns written against a prefix. Locators read the original.
        message = normalize(text)
        found = self._match(message)
        if found is None and message != text:
            found = self._match(text)
        if found is None:
            return
        signature, match = found
        if signature.role is Role.BENIGN:
            self.benign_lines += 1
            if signature.id == NOTE_ID:
                self._unraisable.open(file, line_no)
            return
        if self._unraisable.swallows(file, line_no, signature.id):
            self.benign_lines += 1  # a line of the traceback of an exception CPython ignored
            return
        self._order += 1
        candidate = self.candidates.get(signature.id)
        if candidate is None:
            candidate = self.candidates[signature.id] = Candidate(signature, first_order=self._order)
        candidate.count += 1
        if file not in candidate.timed_files and len(candidate.timed_files) < MAX_LOCATIONS:
            # A file is written in time order, so a signature's first line in each file is its earliest
            # there: parsing the time of later lines cannot change the answer, and costs ~10 us a line.
            candidate.timed_files.add(file)
            stamp, year = parse_timestamp(text, self.context.year)
            if year is not None:
                self.context.year = year
            if stamp is not None and (candidate.first_time is None or stamp < candidate.first_time):
                candidate.first_time = stamp
        if len(candidate.evidence) < MAX_EVIDENCE_PER_CANDIDATE:
            short = shorten(text, EVIDENCE_TEXT_CHARS - 40) if len(text) > EVIDENCE_TEXT_CHARS else text
            candidate.evidence.append(Evidence(file=file, line_no=max(line_no, 0), text=short, rule=signature.id))
        keys = locate(text, match, signature.locator)
        if signature.locator.value != "none" and (word := self.context.node_named_in(text)):
            keys.append(("node", word))
        place = (file, tuple(keys))
        if place in candidate.locations or len(candidate.locations) < MAX_LOCATIONS:
            candidate.locations[place] += 1

    def note(self, message: str) -> None:
        """Record a problem with the input (unreadable part, overlong line, ...); kept short and unique."""
        if message not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(message)

    def diagnosis(self) -> Diagnosis:
        """The verdict over everything fed so far (can be asked repeatedly while streaming)."""
        return conclude(self)
