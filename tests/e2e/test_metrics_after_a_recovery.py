"""End to end: after a real crash recovery on the real Slurm cluster, a real Prometheus scraping the real
worker's two metrics endpoints answers every dashboard and alert query without error, the key panels have
data, the numbers tell the recovery's story, and every alert rule evaluates cleanly."""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from lazarus.models.names import workflow_id
from lazarus.models.recovery import RecoveryState, Rejection
from tests.e2e.helpers import restore_nodes, wait_state
from tests.e2e.stack import POLICY, E2EStack, submit_training
from tests.metrics.promql import ALERTS, alert_queries, dashboard_queries
from tests.straggler.prometheus_server import running_prometheus
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.slurm,
    pytest.mark.temporal,
    pytest.mark.prometheus,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="the Debian 'prometheus' package is not installed"),
]

PORTS = range(19480, 19490)
CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")

# Panels that must show data (in one of their queries at least) after one recovery, with one advice waiting.
KEY_PANELS = {
    "Detections",
    "Top signatures (24 h)",
    "Recoveries by outcome",
    "Detection latency",
    "Action latency (p95)",
    "Jobs finished",
    "Advice awaiting approval",
    "Oldest advice waiting",
    "Advice published",
    "Watched jobs",
    "Telemetry lag",
    "Telemetry cycles",
    "Telemetry cycle duration",
    "Slurm command latency (p95)",
    "Ledger size",
    "Drain budget left",
    "Workers by role",
    "Workflow task schedule-to-start (p95)",
    "Activity schedule-to-start (p95)",
}

# What the recovery itself must show (instant queries over the raw series).
STORY = {
    'sum(lazarus_detections_total{kind="crash",category="hardware",source="log"})': 1,
    'sum(lazarus_recoveries_total{outcome="restarted"})': 1,
    'sum(lazarus_action_latency_seconds_count{until="requeue_verified"})': 1,
    'sum(lazarus_action_latency_seconds_count{until="running_elsewhere"})': 1,
    'sum(lazarus_jobs_finished_total{state="completed"})': 1,
    'sum(lazarus_advice_total{action="restart",mode="monitor"})': 1,
    "max(lazarus_advice_pending)": 1,
    "max(lazarus_advice_pending_oldest_age_seconds)": 1,
    "count(lazarus_worker_info)": 3,
    'sum(lazarus_telemetry_cycles_total{result="ok"})': 1,
    'sum(lazarus_scheduler_command_duration_seconds_count{command="scontrol requeuehold"})': 1,
    "max(lazarus_ledger_implications)": 1,
}


def query(prometheus: str, expr: str) -> dict[str, Any]:
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as exc:  # a bad query answers 400 with the error in the body
        return json.loads(exc.read())


def value(prometheus: str, expr: str) -> float:
    result = query(prometheus, expr)["data"]["result"]
    return float(result[0]["value"][1]) if result else float("nan")


async def eventually(check, timeout: float = 60) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("Prometheus never showed the expected data")
        await asyncio.sleep(1)


def scrape_config(e2e: E2EStack) -> str:
    return (
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{ALERTS}]\n"
        "scrape_configs:\n"
        "  - job_name: lazarus\n"
        "    static_configs:\n"
        f"      - targets: ['127.0.0.1:{e2e.metrics_port}', '127.0.0.1:{e2e.temporal_metrics_port}']\n"
    )


async def test_every_dashboard_and_alert_query_runs_on_a_real_prometheus_after_a_real_recovery(
    e2e: E2EStack, job_dir: Path
):
    (act_dir := job_dir / "act").mkdir(mode=0o755)
    (monitor_dir := job_dir / "monitor").mkdir(mode=0o755)
    recovered = submit_training(e2e.cluster, act_dir, **CRASH)
    waiting = submit_training(
        e2e.cluster, monitor_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH
    )
    final = await wait_state(
        e2e, recovered, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=150
    )
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    pending = await wait_state(e2e, waiting, RecoveryState.AWAITING_APPROVAL, timeout=90)
    try:
        with running_prometheus(job_dir, scrape_config(e2e), PORTS) as prometheus:
            await eventually(lambda: value(prometheus, "max(lazarus_advice_pending)") >= 1)
            await eventually(lambda: value(prometheus, "count_over_time(lazarus_worker_info{role='control'}[1m])") >= 5)

            for expr, at_least in STORY.items():
                assert value(prometheus, expr) >= at_least, expr
            mean = "sum(lazarus_detection_latency_seconds_sum) / sum(lazarus_detection_latency_seconds_count)"
            assert value(prometheus, mean) < 30

            with_data: set[str] = set()
            for q in dashboard_queries() + alert_queries():
                answer = query(prometheus, q.expr)
                assert answer["status"] == "success", f"{q.where}: {answer.get('error')}"
                if answer["data"]["result"]:
                    with_data.add(q.where)
            missing = {f"dashboard: {title}" for title in KEY_PANELS} - with_data
            assert not missing, f"key panels without data: {sorted(missing)}"

            with urllib.request.urlopen(f"{prometheus}/api/v1/rules", timeout=10) as reply:
                groups = json.loads(reply.read())["data"]["groups"]
            rules = [r for g in groups for r in g["rules"]]
            assert len(rules) == len(alert_queries())
            assert [r["name"] for r in rules if r["health"] not in ("ok", "unknown")] == []
    finally:
        handle = (await e2e.client()).get_workflow_handle(workflow_id("lztest", waiting))
        await handle.execute_update(
            JobRecoveryWorkflow.reject_advice, Rejection(generation=pending.advice.generation, operator="e2e")
        )
        restore_nodes(e2e.cluster)
