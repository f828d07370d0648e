"""`lazarus goodput --milestones FILE`: the job's own costs per failure come from the milestones Lazarus recorded
(issue 12 item 3), not from assumptions.

The input is what `lazarus show JOBID --json` prints (docs/milestones.md): the queue wait is requeued → running
less the requeue delay every case already counts, the restart cost is running → progress restored, each the
median over the recovered attempts. An explicit --queue-wait or --restart-cost still wins; input that is not a
`show --json` document is refused in one line.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lazarus.cli.main import main

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def recovered(attempt: int, fault: float, requeued: float, running: float, restored: float) -> dict[str, Any]:
    """One restarted attempt's milestones, as `lazarus show --json` gives them."""
    return {
        "attempt": attempt,
        "fault_at": at(fault),
        "fault": "nvrm_xid_79",
        "requeued_at": at(requeued),
        "running_at": at(running),
        "progress_restored_at": at(restored),
        "first_step": 41,
        "resumed_from": 40,
        "steps_lost": 7,
        "completed_at": None,
        "ended_at": None,
        "end_state": None,
    }


def show_document(job_id: str, *rows: dict[str, Any]) -> dict[str, Any]:
    first = {"attempt": 0, "running_at": at(-600), "progress_restored_at": at(-590), "first_step": 1}
    return {"job_id": job_id, "milestones": [first, *rows]}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = main(["goodput", *argv])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def two_jobs(tmp_path: Path) -> Path:
    """Two jobs' `show --json`, as JSON lines: three recoveries with queue waits of 7, 67 and 127 s (requeue
    delay 7 s included) and restart costs of 40, 60 and 200 s."""
    path = tmp_path / "shows.jsonl"
    docs = [
        show_document("101", recovered(1, 0, 2, 9, 49), recovered(2, 100, 102, 169, 229)),
        show_document("102", recovered(1, 0, 1, 128, 328)),
    ]
    path.write_text("\n".join(json.dumps(doc) for doc in docs) + "\n")
    return path


def test_the_queue_wait_and_restart_cost_are_the_medians_the_milestones_measured(
    capsys: pytest.CaptureFixture[str], two_jobs: Path
) -> None:
    status, out, err = run(capsys, "--milestones", str(two_jobs), "--json")
    assert (status, err) == (0, "")
    data = json.loads(out)
    assert data["inputs"]["job"]["queue_wait"] == pytest.approx(60.0)  # median of 0, 60, 120 (7 s delay removed)
    assert data["inputs"]["job"]["restart_cost"] == pytest.approx(60.0)  # median of 40, 60, 200
    assert data["measured"]["recoveries"] == 3
    assert data["measured"]["restart_cost"] == {"n": 3, "median": 60.0, "worst": 200.0}


def test_the_table_says_where_the_costs_came_from(capsys: pytest.CaptureFixture[str], two_jobs: Path) -> None:
    status, out, err = run(capsys, "--milestones", str(two_jobs))
    assert (status, err) == (0, "")
    assert "measured from 3 recovered attempt(s): queue wait median 60.0 s" in out
    assert "restart cost median 60.0 s (worst 3.3 min, n=3)" in out


def test_measured_costs_lower_the_estimate_when_they_are_below_the_assumed_ones(
    capsys: pytest.CaptureFixture[str], two_jobs: Path
) -> None:
    assumed = json.loads(run(capsys, "--json")[1])
    measured = json.loads(run(capsys, "--milestones", str(two_jobs), "--json")[1])
    assert all(m["ettr"] > a["ettr"] for m, a in zip(measured["estimates"], assumed["estimates"], strict=True))


def test_an_explicit_option_wins_over_the_measurement(capsys: pytest.CaptureFixture[str], two_jobs: Path) -> None:
    data = json.loads(run(capsys, "--milestones", str(two_jobs), "--restart-cost", "10m", "--json")[1])
    assert data["inputs"]["job"]["restart_cost"] == 600.0
    assert data["inputs"]["job"]["queue_wait"] == pytest.approx(60.0)


def test_a_single_document_from_stdin_is_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    doc = show_document("7", recovered(1, 0, 2, 9, 12))
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(doc, indent=2)))
    data = json.loads(run(capsys, "--milestones", "-", "--json")[1])
    assert data["inputs"]["job"]["restart_cost"] == pytest.approx(3.0)
    assert data["inputs"]["job"]["queue_wait"] == 0.0


def test_a_job_that_never_recovered_measures_nothing_and_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "quiet.json"
    path.write_text(json.dumps(show_document("9")))
    status, out, err = run(capsys, "--milestones", str(path))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and "no recovered attempt" in err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("", "empty"),
        ("{not json\n", "line 1 is not JSON"),
        ('{"job_id": "1"}', "no `milestones` key"),
        ('{"milestones": [{"attempt": -1}]}', "attempt"),
    ],
)
def test_input_that_is_not_show_json_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    status, out, err = run(capsys, "--milestones", str(path))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and says in err and "Traceback" not in err


def test_a_missing_file_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(capsys, "--milestones", str(tmp_path / "nope.json"))
    assert status == 2 and err.count("\n") == 1 and "cannot read it" in err
