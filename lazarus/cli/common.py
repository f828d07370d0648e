"""Helpers shared by the CLI subcommands: settings, Temporal client, JSON output."""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from lazarus.config import DEFAULT_STATE_DIR, Settings, load_settings
from lazarus.errors import LazarusError

T = TypeVar("T")


class JobNotWatched(LazarusError):
    """No Lazarus workflow exists for the job."""


def settings_from(args: Any) -> Settings:
    """--config, else $LAZARUS_CONFIG, else the embedded dev stack's config if `lazarus dev up` wrote one."""
    path = getattr(args, "config", None) or os.environ.get("LAZARUS_CONFIG")
    if not path and (DEFAULT_STATE_DIR / "lazarus.yaml").exists():
        path = str(DEFAULT_STATE_DIR / "lazarus.yaml")
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


class SlurmCommandFailed(LazarusError):
    """A Slurm client command the CLI ran directly failed."""


def run_slurm(settings: Settings, *argv: str, hint: str = "", timeout: float = 60) -> str:
    """Run a Slurm client command against the configured cluster; one clear error if it fails."""
    env = dict(os.environ, SLURM_CONF=str(settings.scheduler.slurm_conf)) if settings.scheduler.slurm_conf else None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        raise SlurmCommandFailed(f"{argv[0]} not found: is slurm-client installed and on PATH?{hint}") from None
    if out.returncode != 0:
        raise SlurmCommandFailed(f"{' '.join(argv[:2])} failed: {out.stderr.strip() or out.stdout.strip()}{hint}")
    return out.stdout.strip()
