"""Reasoning over a whole failure: pick the root cause among the candidates and name its node.

The rules, in order:

1. Candidates that did not reach their signature's ``min_count`` (a single
   retried I/O error) do not count.
2. Root-role candidates are preferred over victims. A victim (a rank reporting
   a remote error or a collective timeout because a peer died) is only the
   answer when nothing else explains the failure, and even then its nodes are
   never blamed.
3. Among the pool, the highest ``severity`` wins (the catalogue encodes
   specificity and category strength there: a fallen-off-the-bus Xid beats a
   generic exception); ties go to the earliest timestamp, then to the first
   line seen.
4. Implicated nodes are the root's nodes when its signature blames nodes. When
   the root itself excludes nodes, the nodes of any other hardware root that
   excludes nodes are added (two broken GPUs in one failure are both
   excluded); otherwise such faults are only noted. Victims' nodes never are.
   Given the attempt's allocation, a node outside it is never implicated (the
   context sets it aside and the notes name it). A signature that blames
   the *peer* at the other end of a failed link (``nccl_peer`` locator)
   and whose peer maps to no node has named nothing to exclude: the
   decision table decides again without node evidence (retry as is).
5. A collective timeout reported by every rank but one (the layout gives the
   world size) blames the node of the rank that never reported
   (:mod:`.missing_rank`); the decision table's node-evidence row then
   excludes it.
6. Collective timeouts that name two or more different collectives are a
   mismatch between the ranks' programs (:mod:`.collective_mismatch`): the
   category is application, and the table's application row stops.
Advisory candidates (health warnings) become notes, never a failure.

The confidence is the raw score mapped through :mod:`.calibration` (measured
on the real corpus' dev split): it estimates how often such advice is right.
"""

from __future__ import annotations

import math

from lazarus.detection.advice_table import advise
from lazarus.detection.calibration import calibrate
from lazarus.detection.candidate import Candidate, Findings
from lazarus.detection.catalogue import Locator, Role
from lazarus.detection.collective_mismatch import mismatched_collectives
from lazarus.detection.missing_rank import missing_rank
from lazarus.models.diagnosis import Category, Diagnosis, Evidence, FailureKind, RetryAdvice

MAX_EVIDENCE = 20
OTHER_EVIDENCE_PER_CANDIDATE = 2


def _rank_key(candidate: Candidate) -> tuple[int, float, int]:
    time = candidate.first_time if candidate.first_time is not None else math.inf
    return (-candidate.signature.severity, time, candidate.first_order)


def candidate_nodes(analyzer: Findings, candidate: Candidate) -> list[str]:
    """Nodes of a candidate's matches, most frequent first."""
    weights: dict[str, int] = {}
    for (file, keys), count in candidate.locations.items():
        for node in analyzer.context.resolve(keys, file):
            weights[node] = weights.get(node, 0) + count
    return sorted(weights, key=lambda n: (-weights[n], n))


def _hardware_coroots(others: list[Candidate]) -> list[Candidate]:
    return [
        o
        for o in others
        if o.signature.role is Role.ROOT
        and o.signature.category is Category.HARDWARE
        and o.signature.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES
    ]


def _implicated(analyzer: Findings, root: Candidate, others: list[Candidate]) -> tuple[list[str], list[str]]:
    """The nodes to blame, plus notes about hardware faults that are reported but not blamed."""
    nodes = candidate_nodes(analyzer, root) if root.signature.blames_node else []
    notes = []
    for other in _hardware_coroots(others):
        other_nodes = [n for n in candidate_nodes(analyzer, other) if n not in nodes]
        if root.signature.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES:
            nodes += other_nodes  # two broken GPUs in one failure: exclude both
        elif other_nodes:
            # The root says "retry as is" (time limit, preemption, ...): report the fault, do not exclude.
            notes.append(f"hardware signature {other.signature.id} also seen on {', '.join(other_nodes)}")
    return nodes, notes


def _confidence(analyzer: Findings, root: Candidate, others: list[Candidate], nodes: list[str]) -> float:
    value = root.signature.confidence
    if root.count > 1:
        value += 0.05
    root_nodes = set(candidate_nodes(analyzer, root))
    if any(o.signature.role is Role.ROOT and root_nodes & set(candidate_nodes(analyzer, o)) for o in others):
        value += 0.1  # e.g. a CUDA error and an Xid on the same node tell the same story
    if root.signature.role is Role.VICTIM:
        value *= 0.7
    if root.signature.blames_node and not nodes:
        value -= 0.2
    return round(min(0.99, max(0.05, value)), 2)


def _evidence(root: Candidate, others: list[Candidate]) -> list[Evidence]:
    evidence = list(root.evidence)
    for other in others:
        evidence += other.evidence[:OTHER_EVIDENCE_PER_CANDIDATE]
    return evidence[:MAX_EVIDENCE]


def _explanation(root: Candidate, others: list[Candidate], nodes: list[str]) -> str:
    sig = root.signature
    first = root.evidence[0] if root.evidence else None
    where = f", first at {first.file}:{first.line_no}" if first else ""
    text = f"{sig.title}: {sig.explanation} Seen {root.count} time(s){where}."
    if nodes:
        text += f" Implicated node(s): {', '.join(nodes)}."
    if sig.role is Role.VICTIM:
        text += " Only symptoms of a failure elsewhere were found; no node is blamed."
    if others:
        names = ", ".join(o.signature.id for o in others[:6])
        text += f" Also seen, treated as consequences or secondary: {names}."
    return text


def _advisory_notes(analyzer: Findings, advisories: list[Candidate]) -> list[str]:
    notes = []
    for cand in advisories:
        nodes = candidate_nodes(analyzer, cand)
        where = f" on {', '.join(nodes)}" if nodes else ""
        notes.append(f"advisory {cand.signature.id}{where} ({cand.count} line(s)): {cand.signature.explanation}")
    return notes


def _reading_notes(analyzer: Findings) -> list[str]:
    notes = list(analyzer.notes) + analyzer.context.outside_notes()
    if analyzer.context.unmapped_ranks:
        ranks = ", ".join(str(r) for r in sorted(analyzer.context.unmapped_ranks)[:8])
        notes.append(f"rank(s) {ranks} could not be mapped to a node; pass --nodes and --tasks-per-node")
    return notes


def conclude(analyzer: Findings) -> Diagnosis:
    """Conclude the root cause: turn the analyser's candidates into one :class:`Diagnosis`."""
    counted = [c for c in analyzer.candidates.values() if c.count >= c.signature.min_count]
    advisories = sorted((c for c in counted if c.signature.role is Role.ADVISORY), key=_rank_key)
    roots = sorted((c for c in counted if c.signature.role is Role.ROOT), key=_rank_key)
    victims = sorted((c for c in counted if c.signature.role is Role.VICTIM), key=_rank_key)
    pool = roots or victims
    if not pool:
        notes = _reading_notes(analyzer) + _advisory_notes(analyzer, advisories)
        return Diagnosis(
            explanation=f"No failure signature found in {analyzer.lines_seen} line(s) "
            f"({analyzer.benign_lines} known-benign line(s) ignored).",
            notes=notes,
        )
    root, others = pool[0], [c for c in roots + victims if c is not pool[0]]
    nodes, hardware_notes = _implicated(analyzer, root, others)
    confidence = calibrate(_confidence(analyzer, root, others, nodes))
    notes = _reading_notes(analyzer) + hardware_notes + _advisory_notes(analyzer, advisories)
    sig = root.signature
    advice = sig.retry_advice
    if advice is RetryAdvice.RETRY_EXCLUDING_NODES and not nodes and sig.locator is Locator.NCCL_PEER:
        # The line names the peer at the other end of a failed link; unresolved, it names no node to exclude.
        advice = advise(sig.failure_kind, sig.category, node_evidence=False)
    category = sig.category
    mismatch = mismatched_collectives(root) if not roots else []
    if mismatch:
        category = Category.APPLICATION
        advice = advise(sig.failure_kind, category, node_evidence=False)
        notes.append(f"the ranks timed out in different collectives ({', '.join(mismatch)}): mismatched collectives")
    silent = missing_rank(root, analyzer.context.layout) if not roots and not mismatch else None
    silent_node = analyzer.context.layout.node_for_rank(silent) if silent is not None else None
    allocation = analyzer.context.allocation
    if silent_node is not None and (allocation is None or silent_node in allocation):
        nodes = [silent_node]
        advice = advise(sig.failure_kind, sig.category, node_evidence=True)
        notes.append(
            f"every rank but rank {silent} reported the collective timeout: rank {silent} ({silent_node}) "
            "is the one the others waited for"
        )
    return Diagnosis(
        failure_kind=sig.failure_kind if sig.failure_kind is not FailureKind.NONE else FailureKind.CRASH,
        category=category,
        signature=sig.id,
        retry_advice=advice,
        implicated_nodes=nodes,
        confidence=confidence,
        evidence=_evidence(root, others),
        explanation=_explanation(root, others, nodes),
        notes=notes,
    )
