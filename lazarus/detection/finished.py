"""What a finished file can say with a report that carries its own measure, when it holds no failure.

Some reports are advisories in a live job and answers in a finished file. A
stall inspector says that ranks have waited "for more than 60 seconds"; a
GPU's clocks-event reason says that it runs below its clocks. Live, the stall
may clear and the hang watchdog measures silence in real time, and the
straggler detector compares ranks: the report stays a note
(:mod:`.verdict`). A file given to ``lazarus diagnose`` has no clock but the
report's own, so a catalogue entry marked ``answers_a_finished_file`` answers
it when nothing else was found:

- a straggler report (``failure_kind: straggler``) is that straggler;
- a hang report (``failure_kind: hang``) is a hang, and a report of a failure
  the program recovers from by itself (``failure_kind: crash``: TensorFlow
  recreating its session after losing a worker) a crash, only when it is the
  file's last word: a line holding one of its keywords lies in the file's last
  :data:`TAIL_BYTES` and no progress line (a step-time reading, or a step,
  iteration, epoch or loss value) follows the last of them (a stall that
  cleared, a session that was recreated, is followed by training steps); and, when the catalogue gives
  the report's ``report_details``, only when the report carries them (Horovod's
  inspector lists the stalled operations and the ranks that are ready or
  missing; a bare warning, a forwarded or cut line, stays a note: a stall
  that cleared prints the same first line).

Advice follows the decision table; only a hardware report names its node (a
stall names the ranks that waited, not the one at fault).
"""

from __future__ import annotations

from pathlib import Path

from lazarus.detection.advice_table import advise
from lazarus.detection.calibration import calibrate
from lazarus.detection.candidate import Candidate, Findings
from lazarus.detection.catalogue import Role
from lazarus.detection.slowdown import read_tail, training_progress
from lazarus.detection.verdict import candidate_nodes
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind

TAIL_BYTES = 64 * 1024


def _answering(analyzer: Findings) -> list[Candidate]:
    return sorted(
        (
            c
            for c in analyzer.candidates.values()
            if c.signature.role is Role.ADVISORY
            and c.signature.answers_a_finished_file
            and c.count >= c.signature.min_count
        ),
        key=lambda c: (-c.signature.severity, c.first_order),
    )


def _last_word(candidate: Candidate, files: list[Path]) -> bool:
    """A line of ``candidate``'s signature is in some file's tail, with no progress line after the last one."""
    signature = candidate.signature
    for path in files:
        try:
            lines = read_tail(path, TAIL_BYTES)
        except OSError:
            continue
        last = None
        for index, line in enumerate(lines):
            # The keywords alone place the report: a wrapped report line still holds one ("Stalled ranks:").
            if any(k in line for k in signature.keywords):
                last = index
        if last is None or any(training_progress(line) for line in lines[last + 1 :]):
            continue
        if signature.shows_details(lines[last:]):
            return True
    return False


def finished_file_diagnosis(analyzer: Findings, files: list[Path], found: Diagnosis) -> Diagnosis | None:
    """The answer of a report marked ``answers_a_finished_file`` (``found`` found no failure), or None."""
    for candidate in _answering(analyzer):
        sig = candidate.signature
        if sig.failure_kind in (FailureKind.HANG, FailureKind.CRASH) and not _last_word(candidate, files):
            continue
        # A hardware report names the node it ran on; a stall names the ranks that waited, not the one at fault.
        nodes = candidate_nodes(analyzer, candidate) if sig.category is Category.HARDWARE else []
        first = candidate.evidence[0] if candidate.evidence else None
        where = f", first at {first.file}:{first.line_no}" if first else ""
        notes = [n for n in found.notes if not n.startswith(f"advisory {sig.id}")]
        return found.model_copy(
            update={
                "failure_kind": sig.failure_kind,
                "category": sig.category,
                "signature": sig.id,
                "retry_advice": advise(sig.failure_kind, sig.category, node_evidence=bool(nodes)),
                "implicated_nodes": nodes,
                "confidence": calibrate(sig.confidence),
                "evidence": candidate.evidence,
                "explanation": f"{sig.title}: {sig.explanation} Seen {candidate.count} time(s){where}; "
                "nothing else in the log explains the end of the run.",
                "notes": notes,
            }
        )
    return None
