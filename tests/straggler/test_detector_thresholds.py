"""The drop fraction, the number of windows and the history needed are the operator's to tune."""

from lazarus.straggler.detector import find_stragglers
from lazarus.straggler.models import StragglerThresholds
from tests.straggler.series import drop_at, job


def _job_with_drop(factor: float, windows: int, history: int = 20) -> list:
    n = history + windows
    nodes = {n_: [1000.0] * n for n_ in ("a", "b", "c", "d")}
    nodes["d"] = drop_at(nodes["d"], history, factor)
    return job("9", nodes)


def test_the_drop_fraction_is_configurable():
    series = _job_with_drop(0.85, 5)  # a 15% drop
    assert find_stragglers(series, StragglerThresholds()) == []
    (finding,) = find_stragglers(series, StragglerThresholds(drop_fraction=0.1))
    assert round(finding.drop_fraction, 2) == 0.15


def test_the_number_of_windows_is_configurable():
    series = _job_with_drop(0.5, 4)
    assert len(find_stragglers(series, StragglerThresholds(min_windows=4))) == 1
    assert find_stragglers(series, StragglerThresholds(min_windows=5)) == []


def test_no_judgement_without_enough_history():
    series = _job_with_drop(0.5, 3, history=2)
    assert find_stragglers(series, StragglerThresholds(min_baseline_windows=3)) == []
    assert len(find_stragglers(series, StragglerThresholds(min_baseline_windows=2))) == 1


def test_a_single_node_job_is_judged_against_its_own_history_with_low_confidence():
    (finding,) = find_stragglers(job("10", {"only": drop_at([1000.0] * 25, 20, 0.5)}), StragglerThresholds())
    assert finding.mode == "individual"
    assert finding.evidence[0].reference is None
    assert finding.to_diagnosis().confidence < 0.5
