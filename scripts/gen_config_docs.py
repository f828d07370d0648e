#!/usr/bin/env python3
"""Generate docs/configuration.md from the pydantic ``Settings`` model.

The model in lazarus/config.py is the single source of truth; this page is derived from it so
that it can never drift: tests/config/test_configuration_docs_are_current.py fails when the
committed page differs from what this script writes.

    python scripts/gen_config_docs.py           # rewrite docs/configuration.md
    python scripts/gen_config_docs.py --check   # exit 1 if it is out of date

Run it with no LAZARUS_* variables set: one default (dev.state_dir) follows the environment.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import types
import typing
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from pathlib import Path

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lazarus.config import NotificationSettings, Settings, TaskQueues  # noqa: E402  (needs the repo on sys.path)

DOC = REPO / "docs" / "configuration.md"
ENV_PREFIX = "LAZARUS_"
SCALAR_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", Path: "path", timedelta: "duration"}


@dataclass(frozen=True)
class Row:
    key: str
    env: str
    type: str
    default: str
    description: str


def _is_model(candidate: object) -> bool:
    return isinstance(candidate, type) and issubclass(candidate, BaseModel)


def _model_of(annotation: object) -> tuple[type[BaseModel] | None, bool]:
    """The pydantic model of a ``Model`` or ``Model | None`` field, and whether it may be null.

    Containers such as ``dict[str, Policy]`` are not sections and give ``(None, False)``.
    """
    if _is_model(annotation):
        return annotation, False  # type: ignore[return-value]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [a for a in typing.get_args(annotation) if _is_model(a)]
        if models:
            return models[0], type(None) in typing.get_args(annotation)
    return None, False


def _type_name(annotation: object) -> str:
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if typing.get_origin(annotation) is dict:
        return f"mapping of name to {typing.get_args(annotation)[1].__name__} (section below)"
    if typing.get_origin(annotation) is list:
        item = typing.get_args(annotation)[0]
        return f"list of {item.__name__} (section below)" if _is_model(item) else f"list of {_type_name(item)}"
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(annotation) if a is not type(None)) + " or null"
    return SCALAR_NAMES.get(annotation, getattr(annotation, "__name__", str(annotation)))  # type: ignore[call-overload]


def _rules(field: FieldInfo) -> str:
    words = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    rules = []
    for meta in field.metadata:
        for attr, sign in words.items():
            bound = getattr(meta, attr, None)
            if bound is not None:
                rules.append(
                    f"{sign} {bound.total_seconds():g} s" if isinstance(bound, timedelta) else f"{sign} {bound}"
                )
        if getattr(meta, "min_length", None) == 1:
            rules.append("not empty")
        if getattr(meta, "pattern", None):
            rules.append(f"matches `{meta.pattern}`")
    return f" ({', '.join(rules)})" if rules else ""


def _default(field: FieldInfo, in_optional_section: bool) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "**required** when the section is given" if in_optional_section else "**required**"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, timedelta):
        return f"`{value.total_seconds():g}` s"
    if isinstance(value, dict):
        return ", ".join(f"`{key}`" for key in value) + " with the defaults below"
    if isinstance(value, Enum):
        return f"`{value.value}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def key_path(path: list[str]) -> str:
    return ".".join(path)


def _rows(model: type[BaseModel], prefix: list[str], optional: bool = False) -> list[Row]:
    rows = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        path = [*prefix, key]
        nested, nullable = _model_of(field.annotation)
        if nested is not None:
            rows += _rows(nested, path, optional or nullable)
            continue
        rows.append(
            Row(
                key=".".join(path),
                env="(in the list's JSON)"
                if "[]" in key_path(path)
                else ENV_PREFIX + "__".join(p.upper() for p in path),
                type=_type_name(field.annotation) + _rules(field),
                default=_default(field, optional),
                description=(field.description or "").replace("|", "\\|"),
            )
        )
    return rows


def _sections() -> list[tuple[str, str, list[Row]]]:
    """(title, intro, rows) per section: top-level scalars, each nested model, then policies."""
    top = [r for r in _rows(Settings, []) if "." not in r.key]
    sections = [("Top level", "Cluster-wide settings.", top)]
    for name, field in Settings.model_fields.items():
        nested, _ = _model_of(field.annotation)
        if nested is not None:
            sections.append((f"`{name}`", inspect.cleandoc(nested.__doc__ or ""), _rows(nested, [name])))
    webhook_model = typing.get_args(NotificationSettings.model_fields["webhooks"].annotation)[0]
    sections.append(
        (
            "`notifications.webhooks[]`",
            inspect.cleandoc(webhook_model.__doc__ or "") + " Each entry of `notifications.webhooks` is one webhook; "
            "through the environment the whole list is one JSON value (`LAZARUS_NOTIFICATIONS__WEBHOOKS`). "
            "Kinds of notice (`events`): `advice-pending`, `job-stopped`, `job-failed`, `node-drained`, "
            "`drain-refused`.",
            _rows(webhook_model, ["notifications", "webhooks[]"], optional=True),
        )
    )
    policy_model = typing.get_args(Settings.model_fields["policies"].annotation)[1]
    sections.append(
        (
            "`policies.<name>`",
            (policy_model.__doc__ or "").strip() + " A policy named `default` is required; giving "
            "`policies` replaces the built-in set, so include `default` in it. A job may name `default` or "
            "a policy marked `selectable`, and its comment may only tighten that policy (shorter "
            "`hang_budget` and `startup_grace`, fewer attempts, monitor mode, `on_stop: cancel`: a stopped job "
            "gives its allocation back).",
            _rows(policy_model, ["policies", "<name>"]),
        )
    )
    return sections


HEADER = """# Configuration reference

<!-- Generated by scripts/gen_config_docs.py from lazarus/config.py; do not edit by hand. -->

Every Lazarus process (workers, CLI, node agent, `lazarus dev`) reads one configuration, validated by
the `Settings` model in `lazarus/config.py`. Sources, highest priority first:

1. keyword arguments given in code (tests);
2. `LAZARUS_*` environment variables; nested keys join with `__`, e.g. `LAZARUS_TEMPORAL__ADDRESS`;
   a variable naming a whole section (`LAZARUS_TEMPORAL`) must hold JSON;
3. the YAML file named by `--config` or `LAZARUS_CONFIG`;
4. the defaults below.

Sources merge field by field: setting `LAZARUS_TEMPORAL__ADDRESS` keeps `temporal.namespace` from the
file. Unknown keys are errors that name the key, so a typo never falls back to a default silently.

Durations are seconds in YAML (`hang_budget: 1800`) or ISO 8601 (`PT30M`) or `HH:MM:SS`; in environment
variables use ISO 8601 or `HH:MM:SS` (`LAZARUS_DISCOVERY__INTERVAL=PT2S`). Environment variable names are
case-insensitive, so policy names set through the environment are lower case.

Two more variables are read outside the model: `LAZARUS_CONFIG` (the YAML file, as above) and
`LAZARUS_STATE_DIR_DEFAULT` (changes the default of `dev.state_dir`, read when the configuration loads).
"""


def render() -> str:
    parts = [HEADER]
    for title, intro, rows in _sections():
        parts.append(f"\n## {title}\n\n{intro}\n\n")
        parts.append("| Key | Environment variable | Type | Default | Description |\n")
        parts.append("|---|---|---|---|---|\n")
        parts.extend(f"| `{r.key}` | `{r.env}` | {r.type} | {r.default} | {r.description} |\n" for r in rows)
    every = Settings().model_dump(mode="json", by_alias=True)
    every["task_queues"] = TaskQueues().model_dump()  # empty: named for the cluster when the file loads
    defaults = yaml.safe_dump(every, sort_keys=False)
    parts.append(f"\n## Every default, as a loadable file\n\n```yaml\n{defaults}```\n")
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/configuration.md is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not DOC.exists() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC.relative_to(REPO)} is out of date: run python scripts/gen_config_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
