#!/usr/bin/env python3
"""Generate the Grafana dashboard helm/lazarus/files/grafana-dashboard.json from the panel list below.

The chart ships the JSON as a ConfigMap for Grafana's dashboard sidecar
(``metrics.grafanaDashboard.enabled``); it can also be imported by hand (Dashboards → Import). Every
query names metrics of the catalogue (lazarus/models/metrics.py, docs/metrics.md);
tests/metrics/test_dashboard_and_alerts_query_exported_metrics.py checks that, and that the committed
file is what this script writes, and the e2e test runs every query against a real Prometheus.

    python scripts/gen_dashboard.py           # rewrite the dashboard
    python scripts/gen_dashboard.py --check   # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DASHBOARD = REPO / "helm" / "lazarus" / "files" / "grafana-dashboard.json"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
DATASOURCE_VARIABLE = {
    "name": "datasource",
    "label": "Data source",
    "type": "datasource",
    "query": "prometheus",
    "current": {},
    "hide": 0,
}


@dataclass(frozen=True)
class Panel:
    title: str
    description: str
    queries: tuple[tuple[str, str], ...]  # (PromQL, legend)
    unit: str = "short"
    kind: str = "timeseries"  # or "stat"
    width: int = 8


@dataclass(frozen=True)
class Row:
    title: str
    panels: tuple[Panel, ...] = field(default_factory=tuple)


def p95(metric: str, by: str = "") -> str:
    groups = f"le, {by}" if by else "le"
    return f"histogram_quantile(0.95, sum by ({groups}) (rate({metric}_bucket[5m])))"


def p50(metric: str, by: str = "") -> str:
    return p95(metric, by).replace("0.95", "0.5", 1)


ROWS = (
    Row(
        "Recovery",
        (
            Panel(
                "Detections",
                "Anomalies recorded by job workflows, per hour, by kind and category.",
                (("sum by (kind, category) (increase(lazarus_detections_total[1h]))", "{{kind}} {{category}}"),),
            ),
            Panel(
                "Top signatures (24 h)",
                "The root-cause signatures seen most in the last day.",
                (("topk(10, sum by (signature) (increase(lazarus_detections_total[24h])))", "{{signature}}"),),
            ),
            Panel(
                "Recoveries by outcome",
                "How incidents that called for action ended, per hour.",
                (("sum by (outcome) (increase(lazarus_recoveries_total[1h]))", "{{outcome}}"),),
            ),
            Panel(
                "Detection latency",
                "From the evidence (failing line read, job end, hang budget spent) to the anomaly recorded. "
                "Target: 5 s (p95).",
                (
                    (p95("lazarus_detection_latency_seconds"), "p95"),
                    (p50("lazarus_detection_latency_seconds"), "p50"),
                ),
                unit="s",
            ),
            Panel(
                "Action latency (p95)",
                "From the decision to act to the requeue verified, and to the next attempt running elsewhere "
                "(includes Slurm's queue wait). Target: 10 s to verified (p95).",
                ((p95("lazarus_action_latency_seconds", "until"), "{{until}}"),),
                unit="s",
            ),
            Panel(
                "Jobs finished",
                "Job workflows reaching a final state, per hour.",
                (("sum by (state) (increase(lazarus_jobs_finished_total[1h]))", "{{state}}"),),
            ),
            Panel(
                "Fault to milestone (p50, p95)",
                "From the fault to the next attempt requeued (verified), running (Slurm started it), training "
                "progress restored (its first progress line) and completed. Running is not training.",
                (
                    (p50("lazarus_recovery_milestone_seconds", "milestone"), "p50 {{milestone}}"),
                    (p95("lazarus_recovery_milestone_seconds", "milestone"), "p95 {{milestone}}"),
                ),
                unit="s",
                width=12,
            ),
            Panel(
                "Training steps lost",
                "Steps lost to failures per hour: the last step seen before a restart minus the checkpoint it "
                "resumed from.",
                (("sum(increase(lazarus_steps_lost_total[1h]))", "steps lost"),),
                width=12,
            ),
        ),
    ),
    Row(
        "Operators",
        (
            Panel(
                "Advice awaiting approval",
                "Jobs whose advice waits for an operator (`lazarus advice list`).",
                (("max(lazarus_advice_pending)", "waiting"),),
                kind="stat",
                width=6,
            ),
            Panel(
                "Oldest advice waiting",
                "How long the oldest advice has waited; it expires at the policy's decision timeout.",
                (("max(lazarus_advice_pending_oldest_age_seconds)", "oldest"),),
                unit="s",
                kind="stat",
                width=6,
            ),
            Panel(
                "Advice published",
                "Decisions per hour, by action and mode.",
                (("sum by (action, mode) (increase(lazarus_advice_total[1h]))", "{{action}} ({{mode}})"),),
                width=6,
            ),
            Panel(
                "Advice answers",
                "Approved, rejected, expired or superseded, per hour.",
                (("sum by (answer) (increase(lazarus_advice_answers_total[1h]))", "{{answer}}"),),
                width=6,
            ),
        ),
    ),
    Row(
        "Telemetry",
        (
            Panel(
                "Watched jobs",
                "Opted-in jobs the telemetry loop watches.",
                (("max(lazarus_watched_jobs)", "watched"),),
                width=6,
            ),
            Panel(
                "Telemetry lag",
                "Time since the last cycle that read the scheduler, beyond the interval: 0 when healthy.",
                (("max(lazarus_telemetry_lag_seconds)", "lag"),),
                unit="s",
                width=6,
            ),
            Panel(
                "Telemetry cycles",
                "Cycles per second that read the scheduler (ok) or failed; failed reads of the cluster-wide gauges.",
                (
                    ("sum by (result) (rate(lazarus_telemetry_cycles_total[5m]))", "{{result}}"),
                    ("sum by (source) (rate(lazarus_cluster_view_errors_total[5m]))", "view errors: {{source}}"),
                ),
                unit="ops",
                width=6,
            ),
            Panel(
                "Telemetry cycle duration",
                "Time one cycle takes (scheduler query, log tails, signals).",
                (
                    (p95("lazarus_telemetry_cycle_duration_seconds"), "p95"),
                    (p50("lazarus_telemetry_cycle_duration_seconds"), "p50"),
                ),
                unit="s",
                width=6,
            ),
            Panel(
                "Most restarts of one job (1 h)",
                "The most new attempts one watched job started within the hour: a recovery loop shows here.",
                (("max(lazarus_job_restarts_last_hour_max)", "restarts"),),
                kind="stat",
                width=6,
            ),
        ),
    ),
    Row(
        "Slurm",
        (
            Panel(
                "Slurm command latency (p95)",
                "Wall-clock time of Slurm commands, by command.",
                ((p95("lazarus_scheduler_command_duration_seconds", "command"), "{{command}}"),),
                unit="s",
                width=12,
            ),
            Panel(
                "Slurm command errors",
                "Failed Slurm commands per hour, by command and typed error.",
                (
                    (
                        "sum by (command, error) (increase(lazarus_scheduler_command_errors_total[1h]))",
                        "{{command}}: {{error}}",
                    ),
                ),
                width=12,
            ),
        ),
    ),
    Row(
        "Node ledger",
        (
            Panel(
                "Drains",
                "Nodes drained per hour (by Lazarus or for an operator), and drains refused.",
                (
                    ("sum by (by) (increase(lazarus_drains_total[1h]))", "drained by {{by}}"),
                    ("sum by (reason) (increase(lazarus_drains_refused_total[1h]))", "refused: {{reason}}"),
                ),
                width=6,
            ),
            Panel(
                "Drain budget left",
                "How many more nodes the ledger may drain now (ledger.max_drain_fraction).",
                (("min(lazarus_drain_budget_remaining_nodes)", "nodes"),),
                kind="stat",
                width=6,
            ),
            Panel(
                "Nodes drained",
                "Drained nodes in the ledger's view: by Lazarus, or by someone else.",
                (("max by (by) (lazarus_nodes_drained)", "{{by}}"),),
                width=6,
            ),
            Panel(
                "Ledger size",
                "Node records and implications the node ledger keeps.",
                (
                    ("max(lazarus_ledger_nodes)", "nodes"),
                    ("max(lazarus_ledger_implications)", "implications"),
                ),
                width=6,
            ),
        ),
    ),
    Row(
        "Spare pools",
        (
            Panel(
                "Spares",
                "Each pool's spares free (idle, trusted) and used, and members waiting for a free healthy node.",
                (
                    ("max by (reservation) (lazarus_spares_free)", "free: {{reservation}}"),
                    ("max by (reservation) (lazarus_spares_used)", "used: {{reservation}}"),
                    ("max by (reservation) (lazarus_spares_short_nodes)", "short: {{reservation}}"),
                ),
                width=12,
            ),
            Panel(
                "Refills",
                "Members replaced from the general pool per hour, and pools that went short.",
                (
                    (
                        "sum by (reservation, outcome) (increase(lazarus_spare_refills_total[1h]))",
                        "{{reservation}}: {{outcome}}",
                    ),
                ),
                width=12,
            ),
        ),
    ),
    Row(
        "Workers and Temporal",
        (
            Panel(
                "Workers by role",
                "Worker processes serving each role.",
                (("count by (role) (lazarus_worker_info)", "{{role}}"),),
                width=6,
            ),
            Panel(
                "Workflow task schedule-to-start (p95)",
                "How long workflow tasks wait for a control worker (Temporal SDK).",
                ((p95("temporal_workflow_task_schedule_to_start_latency", "task_queue"), "{{task_queue}}"),),
                unit="s",
                width=6,
            ),
            Panel(
                "Activity schedule-to-start (p95)",
                "How long activities wait for a scheduler or telemetry worker (Temporal SDK).",
                ((p95("temporal_activity_schedule_to_start_latency", "task_queue"), "{{task_queue}}"),),
                unit="s",
                width=6,
            ),
            Panel(
                "Task failures",
                "Failed workflow tasks and activities per second (Temporal SDK); free task slots.",
                (
                    ("sum by (workflow_type) (rate(temporal_workflow_task_execution_failed[5m]))", "{{workflow_type}}"),
                    ("sum by (activity_type) (rate(temporal_activity_execution_failed[5m]))", "{{activity_type}}"),
                    ("min by (worker_type) (temporal_worker_task_slots_available)", "free slots: {{worker_type}}"),
                ),
                width=6,
            ),
        ),
    ),
)


def _panel(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    refs = "ABCDEFGH"
    options: dict[str, Any]
    if panel.kind == "stat":
        options = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}, "colorMode": "value"}
    else:
        options = {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}}
    return {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": 8, "w": panel.width, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
        "options": options,
        "targets": [
            {"refId": refs[i], "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(panel.queries)
        ],
    }


def dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    y, panel_id = 0, 1
    for row in ROWS:
        panels.append(
            {"id": panel_id, "type": "row", "title": row.title, "collapsed": False, "panels": [],
             "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}}
        )  # fmt: skip
        panel_id, y, x = panel_id + 1, y + 1, 0
        for panel in row.panels:
            if x + panel.width > 24:
                x, y = 0, y + 8
            panels.append(_panel(panel, panel_id, x, y))
            panel_id, x = panel_id + 1, x + panel.width
        y += 8
    return {
        "title": "Lazarus",
        "uid": "lazarus-overview",
        "description": "Lazarus recovery for Slurm training jobs: detections, advice, recoveries, telemetry, "
        "Slurm, the node ledger and the workers (docs/metrics.md).",
        "tags": ["lazarus", "slurm", "temporal"],
        "editable": True,
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "timezone": "",
        "annotations": {"list": []},
        "templating": {"list": [DATASOURCE_VARIABLE]},
        "panels": panels,
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the dashboard is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not DASHBOARD.exists() or DASHBOARD.read_text(encoding="utf-8") != text:
            print(f"{DASHBOARD.relative_to(REPO)} is out of date: run python scripts/gen_dashboard.py", file=sys.stderr)
            return 1
        return 0
    DASHBOARD.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
