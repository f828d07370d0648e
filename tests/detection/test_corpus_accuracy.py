"""The labelled corpus: the engine's verdicts must agree with the labels well enough to trust act mode.

Thresholds (issue 4 quality bar): retry advice >= 0.95, category >= 0.90,
implicated-node precision >= 0.95, and not one recovery for a benign case.
"""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import FailureKind
from tests.detection.corpus_cases import load_cases, run_case

CASES = load_cases()


def _advice(diagnosis) -> str | None:
    return diagnosis.retry_advice.value if diagnosis.retry_advice else None


def test_corpus_is_large_and_varied_enough():
    families = {c.family for c in CASES}
    signatures = {c.expect["signature"] for c in CASES if "signature" in c.expect}
    assert len(CASES) >= 150
    assert len(families) >= 30, sorted(families)
    assert len(signatures) >= 30
    assert sum(c.benign for c in CASES) >= 20


def test_benign_cases_never_trigger_a_recovery():
    triggered = []
    for case in (c for c in CASES if c.benign):
        result = run_case(case)
        if result.failure_kind is not FailureKind.NONE or result.retry_advice is not None:
            triggered.append((case.name, result.signature, result.evidence[0].text if result.evidence else ""))
    assert triggered == []


def test_per_field_accuracy_meets_the_bar(capsys):
    total = len(CASES)
    hits = {"kind": 0, "category": 0, "advice": 0}
    signature_hits = signature_total = 0
    true_nodes = predicted_nodes = expected_nodes = 0
    misses = []
    for case in CASES:
        result = run_case(case)
        expect = case.expect
        got = {
            "kind": result.failure_kind.value,
            "category": result.category.value,
            "advice": _advice(result),
        }
        want = {
            "kind": expect.get("kind", "crash"),
            "category": expect.get("category", "unknown"),
            "advice": expect.get("advice"),
        }
        for field in hits:
            hits[field] += got[field] == want[field]
        if "signature" in expect:
            signature_total += 1
            signature_hits += result.signature == expect["signature"]
        wanted_nodes = set(expect.get("nodes", []))
        true_nodes += len(set(result.implicated_nodes) & wanted_nodes)
        predicted_nodes += len(set(result.implicated_nodes))
        expected_nodes += len(wanted_nodes)
        if got != want or set(result.implicated_nodes) != wanted_nodes:
            misses.append(
                f"{case.family}/{case.name}: want {want} {sorted(wanted_nodes)}, "
                f"got {got} {result.implicated_nodes} ({result.signature})"
            )
    accuracy = {field: count / total for field, count in hits.items()}
    precision = true_nodes / predicted_nodes if predicted_nodes else 1.0
    recall = true_nodes / expected_nodes if expected_nodes else 1.0
    with capsys.disabled():
        print(f"\ncorpus: {total} cases, {len({c.family for c in CASES})} families")
        for field, value in accuracy.items():
            print(f"  {field:<10} accuracy {value:.3f}")
        print(f"  signature  accuracy {signature_hits / signature_total:.3f} ({signature_total} labelled)")
        print(f"  nodes      precision {precision:.3f} recall {recall:.3f}")
        for miss in misses:
            print(f"  MISS {miss}")
    assert accuracy["advice"] >= 0.95
    assert accuracy["category"] >= 0.90
    assert precision >= 0.95


@pytest.mark.parametrize("case", CASES, ids=[f"{c.family}/{c.name}" for c in CASES])
def test_case_has_complete_labels(case):
    assert case.log.strip() or case.files, "a case needs log text"
    assert "kind" in case.expect
    if not case.benign:
        assert {"category", "advice", "nodes"} <= case.expect.keys()
