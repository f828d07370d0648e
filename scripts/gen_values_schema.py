#!/usr/bin/env python3
"""Generate helm/lazarus/values.schema.json from the ``Settings`` model and the chart's own part.

Every chart value that templates/_config.tpl copies into lazarus.yaml is listed in ``FROM_SETTINGS``
with the Settings field it fills; its rule is that field's JSON schema, so `helm install` refuses
what ``load_settings`` would refuse, before a pod starts. Values that never reach lazarus.yaml, the
keys the templates need and chart-only rules live by hand in helm/chart-values.schema.yaml, which is
merged over the generated part. tests/helm/test_values_schema_is_generated.py fails when the
committed file differs from what this script writes.

    python scripts/gen_values_schema.py           # rewrite helm/lazarus/values.schema.json
    python scripts/gen_values_schema.py --check   # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lazarus.config import Settings  # noqa: E402  (needs the repo on sys.path)

SCHEMA = REPO / "helm" / "lazarus" / "values.schema.json"
CHART_PART = REPO / "helm" / "chart-values.schema.yaml"
DURATION_REF = "#/$defs/duration"  # declared in the chart part

# Chart value (dotted, as in values.yaml) -> the Settings field it fills. A chart key ending in
# "Seconds" holds a duration field as a plain number of seconds.
FROM_SETTINGS: dict[str, str] = {
    "cluster": "cluster",
    "mode": "mode",
    "temporal.address": "temporal.address",
    "temporal.namespace": "temporal.namespace",
    "temporal.uiUrl": "temporal.ui_url",
    "temporal.tls.enabled": "temporal.tls",
    "taskQueues": "task_queues",
    "scheduler.transport": "scheduler.transport",
    "scheduler.commandTimeoutSeconds": "scheduler.command_timeout_s",
    "scheduler.slurmConf": "scheduler.slurm_conf",
    "scheduler.ssh.host": "scheduler.ssh.host",
    "scheduler.ssh.port": "scheduler.ssh.port",
    "scheduler.ssh.user": "scheduler.ssh.user",
    "scheduler.ssh.connectTimeoutSeconds": "scheduler.ssh.connect_timeout_s",
    "discovery.intervalSeconds": "discovery.interval",
    "discovery.logTailMaxBytes": "discovery.log_tail_max_bytes",
    "discovery.jobNamePrefix": "discovery.job_name_prefix",
    "discovery.logRoots": "discovery.log_roots",
    "discovery.logReadTimeoutSeconds": "discovery.log_read_timeout_s",
    "discovery.lease.ttlSeconds": "discovery.lease.ttl",
    "discovery.lease.renewIntervalSeconds": "discovery.lease.renew_interval",
    "discovery.lease.safetyMarginSeconds": "discovery.lease.safety_margin",
    "prometheus.enabled": "prometheus.enabled",
    "prometheus.url": "prometheus.url",
    "prometheus.timeoutSeconds": "prometheus.timeout_s",
    "prometheus.stragglerIntervalSeconds": "prometheus.straggler_interval",
    "prometheus.caFile": "prometheus.ca_file",
    "prometheus.bearerTokenFile": "prometheus.bearer_token_file",
    "prometheus.basicAuthFile": "prometheus.basic_auth_file",
    "attribution.providerUrl": "attribution.provider_url",
    "attribution.timeoutSeconds": "attribution.timeout_s",
    "attribution.caFile": "attribution.ca_file",
    "attribution.bearerTokenFile": "attribution.bearer_token_file",
    "attribution.basicAuthFile": "attribution.basic_auth_file",
    "notifications.webhooks": "notifications.webhooks",
    "ledger.lemonJobCount": "ledger.lemon_job_count",
    "ledger.lemonWindowSeconds": "ledger.lemon_window",
    "ledger.maxDrainFraction": "ledger.max_drain_fraction",
    "ledger.reconcileIntervalSeconds": "ledger.reconcile_interval",
    "ledger.waitingRecheckSeconds": "ledger.waiting_recheck",
    "ledger.maxImplications": "ledger.max_implications",
    "ledger.corroboratingUsers": "ledger.corroborating_users",
    "policies": "policies",
    "authorization.operators": "authorization.operators",
    "logging": "logging",
    "worker.gracefulShutdownSeconds": "worker.graceful_shutdown",
    "metrics.port": "metrics.port",
    "metrics.temporalPort": "metrics.temporal_port",
    "metrics.clusterViewIntervalSeconds": "metrics.cluster_view_interval",
}

_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}
_NOISE = ("title", "default", "format")  # helm needs none of these; values.yaml holds the defaults


class _ChartJsonSchema(GenerateJsonSchema):
    """Marks durations (with their bounds in seconds) so they can become the chart's duration rule."""

    def timedelta_schema(self, schema: core_schema.TimedeltaSchema) -> JsonSchemaValue:
        given: dict[str, Any] = dict(schema)
        bounds = {key: given[bound].total_seconds() for bound, key in _BOUNDS.items() if bound in given}
        return {"x-duration": True, **bounds}


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with every ``$ref`` to a model replaced by the model's schema, recursively."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _inline(value, defs) for key, value in node.items()}
    ref = node.pop("$ref", None)
    return {**_inline(defs[ref.rsplit("/", 1)[1]], defs), **node} if ref else node


def _clean(node: Any, seconds: bool) -> Any:
    """Drop annotations helm does not need; a duration becomes seconds or the chart's duration rule. The keys
    of ``properties`` are field names, never annotations (a webhook has a field called ``format``)."""
    if isinstance(node, list):
        return [_clean(item, seconds) for item in node]
    if not isinstance(node, dict):
        return node
    fields = node.get("properties")
    node = {key: _clean(value, seconds) for key, value in node.items() if key not in _NOISE}
    if isinstance(fields, dict):
        node["properties"] = {name: _clean(value, seconds) for name, value in fields.items()}
    if node.pop("x-duration", False):
        node = {"type": "number", **node} if seconds else {"$ref": DURATION_REF, **node}
    return node


def _accepts_empty(branch: dict[str, Any]) -> bool:
    return branch.get("type") == "string" and "pattern" not in branch and "minLength" not in branch


def _leaf(schema: dict[str, Any], seconds: bool) -> dict[str, Any]:
    """A field's rule for the chart; an optional field may also be "" (the templates then leave it out)."""
    node = _clean(schema, seconds)
    branches = [b for b in node.get("anyOf", []) if b != {"type": "null"}]
    if len(branches) < len(node.get("anyOf", [])) and not any(_accepts_empty(b) for b in branches):
        node["anyOf"] = [*branches, {"const": ""}, {"type": "null"}]
    return node


def _field(settings: dict[str, Any], dotted: str) -> dict[str, Any]:
    """The schema of one Settings field; an optional section (``X | None``) is entered through X."""
    node = settings
    for name in dotted.split("."):
        if "properties" not in node:
            node = next(b for b in node["anyOf"] if "properties" in b)
        node = node["properties"][name]
    return node


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` merged in, mappings key by key; ``over`` wins on anything else."""
    merged = dict(base)
    for key, value in over.items():
        both_maps = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merge(merged[key], value) if both_maps else value
    return merged


def generated() -> dict[str, Any]:
    """The schema of every chart value taken from Settings, as nested chart objects."""
    raw = Settings.model_json_schema(schema_generator=_ChartJsonSchema)
    settings = _inline({k: v for k, v in raw.items() if k != "$defs"}, raw["$defs"])
    root: dict[str, Any] = {"properties": {}}
    for chart_key, settings_key in FROM_SETTINGS.items():
        *parents, name = chart_key.split(".")
        node = root
        for parent in parents:
            node = node["properties"].setdefault(
                parent, {"type": "object", "additionalProperties": False, "properties": {}}
            )
        node["properties"][name] = _leaf(_field(settings, settings_key), chart_key.endswith("Seconds"))
    return root


def render() -> str:
    chart_part = yaml.safe_load(CHART_PART.read_text(encoding="utf-8"))
    merged = _merge(generated(), chart_part)
    ordered = {key: merged[key] for key in chart_part}  # the chart part's order: properties come last
    return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if values.schema.json is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not SCHEMA.exists() or SCHEMA.read_text(encoding="utf-8") != text:
            stale = SCHEMA.relative_to(REPO)
            print(f"{stale} is out of date: run python scripts/gen_values_schema.py", file=sys.stderr)
            return 1
        return 0
    SCHEMA.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
