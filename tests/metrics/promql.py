"""Every PromQL query the dashboard and the alert rules hold, and the metric names each one reads."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from lazarus.models.metrics import CATALOGUE, TEMPORAL_SDK_METRICS, series_names

REPO = Path(__file__).resolve().parents[2]
ALERTS = REPO / "helm" / "lazarus" / "files" / "alerts.yml"
DASHBOARD = REPO / "helm" / "lazarus" / "files" / "grafana-dashboard.json"

_NAME = re.compile(r"\b(?:lazarus|temporal)_[a-z0-9_]+\b")
_MATCHERS = re.compile(r"\{[^}]*\}")
_HISTOGRAM_SERIES = ("_bucket", "_sum", "_count")


@dataclass(frozen=True)
class Query:
    where: str  # "dashboard: <panel title>" or "alert: <name>"
    expr: str

    @property
    def metrics(self) -> set[str]:
        """The metric names the query reads (label matchers left out)."""
        return set(_NAME.findall(_MATCHERS.sub("", self.expr)))


def dashboard_queries() -> list[Query]:
    board = json.loads(DASHBOARD.read_text())
    return [
        Query(f"dashboard: {panel['title']}", target["expr"])
        for panel in board["panels"]
        for target in panel.get("targets", [])
    ]


def alert_queries() -> list[Query]:
    rules = yaml.safe_load(ALERTS.read_text())
    return [Query(f"alert: {rule['alert']}", rule["expr"]) for group in rules["groups"] for rule in group["rules"]]


def exported_series() -> set[str]:
    """Every series name the code exports: the catalogue's, and the Temporal SDK metrics the catalogue names."""
    names = {name for spec in CATALOGUE for name in series_names(spec)}
    names |= {f"{sdk}{suffix}" for sdk in TEMPORAL_SDK_METRICS for suffix in ("", *_HISTOGRAM_SERIES)}
    return names
