"""`lazarus goodput`: a table of the three cases for each job size, or one JSON document with the inputs in
force; every input of the model is an option; a bad input is refused in one line with status 2.

No Temporal and no Slurm: the command is a calculator over lazarus/goodput.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lazarus.cli.goodput import JOB_OPTIONS, duration_arg
from lazarus.cli.main import main
from lazarus.goodput import Case, Inputs, JobCosts, Latencies, estimate

BENCHMARKS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = main(["goodput", *argv])
    except SystemExit as exc:  # argparse's refusals
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def document(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    status, out, err = run(capsys, *argv, "--json")
    assert (status, err) == (0, "")
    return json.loads(out)


def test_the_table_shows_every_case_for_a_1024_and_a_16384_gpu_job(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys)
    assert (status, err) == (0, "")
    rows = [line.split() for line in out.splitlines() if line.split() and line.split()[0] in ("1,024", "16,384")]
    assert [(row[0], row[1]) for row in rows] == [(size, case.value) for size in ("1,024", "16,384") for case in Case]
    assert "ETTR" in out and "GPU-H LOST/WK" in out
    assert "419 in 54 days on 16,384 GPUs" in out  # the inputs are printed with the estimate


def test_json_is_one_document_with_the_inputs_in_force_and_every_estimate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = document(capsys)
    assert data["inputs"]["rate"] == {"interruptions": 419, "days": 54, "gpus": 16384}
    assert data["inputs"]["gpus"] == [1024, 16384]
    assert abs(sum(data["fault_shares"].values()) - 1) < 1e-9
    assert [(row["gpus"], row["case"]) for row in data["estimates"]] == [
        (gpus, case.value) for gpus in (1024, 16384) for case in Case
    ]
    assert all(0 < row["ettr"] <= 1 for row in data["estimates"])


@pytest.mark.parametrize("field", list(Latencies.model_fields))
def test_every_latency_is_an_option(capsys: pytest.CaptureFixture[str], field: str) -> None:
    data = document(capsys, f"--{field.replace('_', '-')}", "1.5h")
    assert data["inputs"]["latencies"][field] == 5400


@pytest.mark.parametrize("option", list(JOB_OPTIONS))
def test_every_job_cost_is_an_option(capsys: pytest.CaptureFixture[str], option: str) -> None:
    data = document(capsys, option, "45m")
    assert data["inputs"]["job"][JOB_OPTIONS[option]] == 2700
    assert set(JOB_OPTIONS.values()) == set(JobCosts.model_fields)


def test_the_failure_rate_mix_and_sizes_are_options(capsys: pytest.CaptureFixture[str]) -> None:
    data = document(
        capsys, "--interruptions", "100", "--days", "10", "--observed-gpus", "8192", "--mix", "hang=1", "--gpus", "512"
    )
    assert data["inputs"]["rate"] == {"interruptions": 100, "days": 10, "gpus": 8192}
    assert data["fault_shares"] == {"crash": 0, "bad-node": 0, "node-down": 0, "hang": 1}
    assert [row["gpus"] for row in data["estimates"]] == [512, 512, 512]


def test_a_shorter_checkpoint_interval_raises_every_cases_ettr(capsys: pytest.CaptureFixture[str]) -> None:
    before = document(capsys)["estimates"]
    after = document(capsys, "--checkpoint-interval", "5m")["estimates"]
    assert all(b["ettr"] < a["ettr"] for b, a in zip(before, after, strict=True))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("45", 45), ("0.53s", 0.53), ("250ms", 0.25), ("2m", 120), ("30min", 1800), ("1.5h", 5400), ("1d", 86400)],
)
def test_durations_take_a_unit_and_a_bare_number_is_seconds(text: str, seconds: float) -> None:
    assert duration_arg(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "argv",
    [
        ("--gpus", "0"),
        ("--gpus", "1024,many"),
        ("--observed-gpus", "1,2"),
        ("--interruptions", "0"),
        ("--days", "nan"),
        ("--mix", "meteor=3"),
        ("--mix", "crash=-1"),
        ("--mix", "crash=0,hang=0"),
        ("--mix", "crash"),
        ("--response", "5 fortnights"),
        ("--response", "-3s"),
        ("--checkpoint-interval", "0"),
        ("--requeue", "inf"),
        ("--repsonse", "5m"),
    ],
)
def test_a_bad_input_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("lazarus"), err
    assert "Traceback" not in err


def test_the_table_in_benchmarks_md_is_what_the_defaults_give() -> None:
    """docs/benchmarks.md's goodput table stays true to the model and its defaults."""
    names = {"Lazarus": Case.LAZARUS, "Slurm alone": Case.SLURM, "person on call": Case.ON_CALL}
    text = BENCHMARKS.read_text()
    section = text[text.index("## Goodput (issue 11)") :]
    documented = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 8 and cells[1] in names:
            documented[(int(cells[0].replace(",", "")), names[cells[1]])] = (cells[6], cells[7])
    computed = {
        (row.gpus, row.case): (f"{row.ettr:.3f}", f"{row.gpu_hours_lost_per_week:,.0f}") for row in estimate(Inputs())
    }
    assert documented == computed
