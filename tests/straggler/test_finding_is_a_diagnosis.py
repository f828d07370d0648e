"""A straggler finding fits the shared Diagnosis contract with failure_kind=straggler."""

from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from tests.straggler.series import drop_at, healthy_job, job


def _finding():
    nodes = healthy_job("77")
    nodes["node2"] = drop_at(nodes["node2"], 24, 0.6)
    (finding,) = find_stragglers(job("77", nodes), StragglerThresholds())
    return finding


def test_the_diagnosis_names_the_node_and_advises_excluding_it():
    d = _finding().to_diagnosis()
    assert d.failure_kind is FailureKind.STRAGGLER
    assert d.category is Category.HARDWARE
    assert d.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES
    assert d.implicated_nodes == ["node2"]
    assert 0.6 <= d.confidence <= 0.9
    assert "node2 ran 4" in d.explanation and "below its usual throughput" in d.explanation


def test_every_slow_window_is_evidence_with_the_rule_id():
    finding = _finding()
    d = finding.to_diagnosis()
    assert len(d.evidence) == finding.windows
    assert {e.rule for e in d.evidence} == {"straggler.throughput_drop"}
    assert all(e.file == "prometheus:lazarus_rank_samples_per_second" and e.line_no == 0 for e in d.evidence)
    assert "vs peers' median" in d.evidence[0].text


def test_the_diagnosis_round_trips_through_json():
    d = _finding().to_diagnosis()
    assert Diagnosis.model_validate_json(d.model_dump_json()) == d
