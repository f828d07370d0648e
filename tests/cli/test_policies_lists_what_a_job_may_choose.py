"""`lazarus policies` lists the configured recovery policies from the configuration alone: which a job may
name in its comment, what each does, and what a comment may tighten; `--json` is one object per policy per line."""

from __future__ import annotations

import json

import pytest

from lazarus.cli.main import main

CONFIG = """\
cluster: t
temporal:
  address: "127.0.0.1:1"
policies:
  default: {hang_budget: 600}
  fast: {hang_budget: 120, hang_budget_min: 60, selectable: true, mode: act, max_attempts: 4}
  ops-only: {startup_grace: 1800}
"""


@pytest.fixture
def config(tmp_path, monkeypatch) -> str:
    monkeypatch.delenv("LAZARUS_CONFIG", raising=False)
    path = tmp_path / "lazarus.yaml"
    path.write_text(CONFIG)
    return str(path)


def test_the_table_says_which_policies_a_job_may_choose_without_any_stack(capsys, config):
    assert main(["--config", config, "policies"]) == 0  # Temporal is down: the configuration is enough
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["POLICY", "CHOOSABLE", "MODE", "HANG", "START-UP", "ATTEMPTS", "NO-CKPT"]
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert rows["default"][1:3] == ["yes", "cluster"]
    assert rows["fast"][1:5] == ["yes", "act", "120", "s"]
    assert rows["ops-only"][1] == "no"
    assert lines[-1] == (
        "a job's comment may tighten: expedite, hang_budget, max_attempts, max_attempts_without_checkpoint, on_stop, "
        "startup_grace"
    )


def test_json_is_one_object_per_policy_per_line(capsys, config):
    assert main(["--config", config, "policies", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["name"] for r in rows] == ["default", "fast", "ops-only"]
    fast = rows[1]
    assert (fast["jobs_may_choose"], fast["mode"], fast["max_attempts"], fast["hang_budget"]) == (
        True,
        "act",
        4,
        "PT2M",
    )
    assert rows[2]["jobs_may_choose"] is False
