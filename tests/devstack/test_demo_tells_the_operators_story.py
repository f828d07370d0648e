"""Spec: `lazarus demo` (monitor mode, its default) tells the whole story an operator lives on the real dev
stack: the advice awaiting approval arrives at the stack's webhook inbox with its link to the job's history,
the demo approves it through Temporal's own HTTP API (printing the documented curl command it is equivalent
to, never the SDK), the node-drained notice follows, and the workers' metrics show the recovery."""

from __future__ import annotations

import json
import re

import pytest

from lazarus.devstack.inbox import read_inbox
from tests.devstack.conftest import LZDEV_STATE, lazarus

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]

WITH_WORKERS = {
    "LAZARUS_DEV__WORKERS": "true",
    "LAZARUS_DEV__METRICS_PORT": "47464",
    "LAZARUS_DEV__TEMPORAL_METRICS_PORT": "47465",
}
DEMO = ("lazarus.cli.dev", "lazarus.cli.demo")


def test_the_demo_shows_the_notice_the_http_approval_and_the_recovery_in_the_metrics(lzdev: None) -> None:
    try:
        up = lazarus("dev", "up", extra_env=WITH_WORKERS, timeout=300)
        assert up.returncode == 0, up.stdout + up.stderr
        status = json.loads(lazarus("dev", "status", "--json", extra_env=WITH_WORKERS).stdout)
        as_user = {**WITH_WORKERS, "LAZARUS_CONFIG": status["lazarus_config"]}  # as `eval "$(lazarus dev env)"` does
        demo = lazarus("demo", extra_env=as_user, timeout=400, modules=DEMO)
        out = demo.stdout
        assert demo.returncode == 0, out + demo.stderr
        job = re.search(r"\(monitor mode\): job (\d+)", out)
        assert job, out
        wid = f"lazarus-lzdev-{job[1]}"

        notice = out.index("notice received by the webhook (advice-pending): advice awaits approval")
        assert f"link: {status['ui_url']}/namespaces/default/workflows/{wid}" in out[notice:]
        curl = out.index("curl -sS --fail-with-body -X POST --data @-")
        assert notice < curl, "the operator approves what the notice told them about"
        assert (
            f'"{status["http_api_url"]}/api/v1/namespaces/default/workflows/{wid}/signal/approve_advice" <<EOF' in out
        )
        assert f'"job_id": {job[1]}, "cluster": "lzdev"' in out
        assert "Temporal took the approve_advice signal" in out
        assert re.search(r"advice 1 approved by \S+", out[curl:]), out
        assert out.index("notice received by the webhook (node-drained): node drained") > curl

        metrics = out[out.index("The recovery in the workers' metrics") :]
        assert re.search(r'lazarus_recoveries_total\{[^}]*outcome="restarted"[^}]*\} [1-9]', metrics), metrics
        for family in ("lazarus_detection_latency_seconds_count", "lazarus_action_latency_seconds_count"):
            assert re.search(rf"{family}\{{[^}}]*\}} [1-9]", metrics), metrics
        assert re.search(r'lazarus_drains_total\{[^}]*by="lazarus"[^}]*\} [1-9]', metrics), metrics

        kept = [e.body for e in read_inbox(LZDEV_STATE / "notices.jsonl") if e.body.get("workflow_id") == wid]
        assert [n["kind"] for n in kept][:1] == ["advice-pending"] and "node-drained" in [n["kind"] for n in kept]
    finally:
        lazarus("dev", "down", extra_env=WITH_WORKERS)
