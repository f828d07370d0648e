"""Helpers shared by the CLI subcommands: settings, Temporal client, JSON output."""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from lazarus.config import Settings, default_state_dir, load_settings
from lazarus.errors import LazarusError

T = TypeVar("T")


class JobNotWatched(LazarusError):
    """No Lazarus workflow exists for the job."""


def settings_from(args: Any) -> Settings:
    """--config, else $LAZARUS_CONFIG, else the embedded dev stack's config if `lazarus dev up` wrote one."""
    path = getattr(args, "config", None) or os.environ.get("LAZARUS_CONFIG")
    if not path and (default_state_dir() / "lazarus.yaml").exists():
        path = str(default_state_dir() / "lazarus.yaml")
    return load_settings(path)


def run_async(fn: Callable[..., Awaitable[T]], *a: Any) -> T:
    return asyncio.run(fn(*a))


def operator_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def print_json(data: Any) -> None:
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    elif isinstance(data, list):
        data = [d.model_dump(mode="json") if isinstance(d, BaseModel) else d for d in data]
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def failure_message(exc: BaseException) -> str:
    """The innermost cause's own message in a Temporal failure chain (``WorkflowUpdateFailedError`` →
    ``ActivityError`` → ``ApplicationError``): "node9: not a node of this cluster", not "Activity task failed"."""
    messages = []
    seen: BaseException | None = exc
    while seen is not None and len(messages) < 20:
        messages.append(getattr(seen, "message", None) or str(seen))
        seen = getattr(seen, "cause", None)
    return next((m for m in reversed(messages) if m), "unknown error")


def ui_link(settings: Settings, workflow_id: str) -> str:
    return f"{settings.temporal.ui_url}/namespaces/{settings.temporal.namespace}/workflows/{workflow_id}"

