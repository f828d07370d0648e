"""`dev up` starts what is down and nothing else; `status` then reports every part up, with the Temporal UI's
and Temporal HTTP API's addresses."""

from __future__ import annotations

import json
import os
import signal
import urllib.request

import pytest

from tests.devstack.conftest import lazarus

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]

EXPECTED = {"munged", "mariadb", "slurmdbd", "slurmctld", "temporal"} | {f"slurmd-node{i}" for i in range(1, 5)}


def test_second_up_starts_nothing_and_status_says_all_up(lzdev: None) -> None:
    first = lazarus("dev", "up")
    assert first.returncode == 0, first.stderr

    second = lazarus("dev", "up")
    assert second.returncode == 0, second.stderr
    assert "started:" not in second.stdout
    assert "already running:" in second.stdout

    status = lazarus("dev", "status", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    report = json.loads(status.stdout)
    assert {c["name"] for c in report["components"]} == EXPECTED
    assert all(c["up"] and c["pid"] for c in report["components"])
    assert report["ui_url"] == "http://127.0.0.1:48233"
    assert report["http_api_url"] == "http://127.0.0.1:47243"
    with urllib.request.urlopen(f"{report['http_api_url']}/api/v1/namespaces/default", timeout=10) as answer:
        assert json.load(answer)["namespaceInfo"]["name"] == "default"  # Temporal's own HTTP API answers


def test_restarting_one_killed_daemon_brings_back_only_that_daemon(lzdev: None) -> None:
    assert lazarus("dev", "up").returncode == 0
    before = {c["name"]: c["pid"] for c in json.loads(lazarus("dev", "status", "--json").stdout)["components"]}
    os.kill(before["slurmd-node3"], signal.SIGKILL)

    again = lazarus("dev", "up")
    assert again.returncode == 0, again.stderr
    assert "started: slurmd-node3\n" in again.stdout
    after = {c["name"]: c["pid"] for c in json.loads(lazarus("dev", "status", "--json").stdout)["components"]}
    assert {n for n in after if after[n] != before[n]} == {"slurmd-node3"}
