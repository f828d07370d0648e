"""Helpers shared by the CLI subcommands: settings, Temporal client, argument types, JSON output
(:func:`json_option`: JSON lines for a listing, one document otherwise).

The argument types (``job_id_arg``, ``generation_arg``, ...) refuse bad input while
argparse parses it, so a wrong value is answered with the subcommand's usage and
one sentence (exit 2), before anything connects to Temporal or Slurm.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
from collections.abc import Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import BaseModel
from temporalio.service import RPCError, RPCStatusCode

from lazarus.config import Settings, default_state_dir, load_settings
from lazarus.errors import LazarusError, shorten
from lazarus.models.names import job_of_workflow_id
from lazarus.slurm.errors import InvalidArgumentError
from lazarus.slurm.validate import job_id as validate_job_id
from lazarus.slurm.validate import node_names

T = TypeVar("T")


class JobNotWatched(LazarusError):
    """No Lazarus workflow exists for the job."""


@contextmanager
def about_job(settings: Settings, job_id: int) -> Iterator[None]:
    """Turn Temporal's "workflow not found" for a job's workflow into :class:`JobNotWatched`."""
    try:
        yield
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        if "completed" in exc.message:
            raise JobNotWatched(
                f"job {job_id} is no longer watched by Lazarus on cluster {settings.cluster}: "
                f"its recovery has finished (`lazarus show {job_id}` for its history)"
            ) from None
        raise JobNotWatched(f"job {job_id} is not watched by Lazarus on cluster {settings.cluster}") from None


def job_id_arg(text: str) -> int:
    """argparse type: a Slurm job id (a positive integer). A workflow id is refused with the cluster it names:
    a job id means a job of the configured cluster, and the same number on another cluster is another job."""
    try:
        return validate_job_id(text)
    except InvalidArgumentError as exc:
        named = job_of_workflow_id(text)
        if named is not None:
            cluster, job = named
            raise argparse.ArgumentTypeError(
                f"{shorten(repr(text), 100)} is a workflow id: it names job {job} of cluster "
                f"{shorten(repr(cluster), 60)}; give a job id of the cluster this configuration is for"
            ) from None
        raise argparse.ArgumentTypeError(str(exc)) from None


def generation_arg(text: str) -> int:
    """argparse type: an advice generation (1 or more, as `lazarus advice list` shows it)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"an advice generation is a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"advice generations start at 1, got {value}")
    return value


def text_arg(what: str, max_length: int | None = None) -> Callable[[str], str]:
    """argparse type: non-blank text of at most ``max_length`` characters, stripped."""

    def parse(text: str) -> str:
        value = text.strip()
        if not value:
            raise argparse.ArgumentTypeError(f"{what} must not be empty")
        if max_length is not None and len(value) > max_length:
            raise argparse.ArgumentTypeError(f"{what} must be at most {max_length} characters, got {len(value)}")
        return value

    parse.__name__ = what
    return parse


def node_arg(text: str) -> str:
    """argparse type: exactly one valid Slurm node name."""
    try:
        names = node_names([text])
    except InvalidArgumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(names) != 1:
        raise argparse.ArgumentTypeError(f"{text!r} names {len(names)} nodes; give one node at a time")
    return names[0]


def settings_from(args: Any) -> Settings:
    """--config, else $LAZARUS_CONFIG, else the embedded dev stack's config if `lazarus dev up` wrote one."""
    path = getattr(args, "config", None) or os.environ.get("LAZARUS_CONFIG")
    if not path and (default_state_dir() / "lazarus.yaml").exists():
        path = str(default_state_dir() / "lazarus.yaml")
    return load_settings(path)


def run_async(fn: Callable[..., Coroutine[Any, Any, T]], *a: Any) -> T:
    return asyncio.run(fn(*a))


def operator_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def json_option(parser: argparse.ArgumentParser, what: str, listing: bool = False) -> None:
    """``--json``, the same in every command: a listing prints JSON lines (one object per item, one item per
    line), any other command one JSON document; ``what`` says what the objects are."""
    parser.add_argument(
        "--json",
        action="store_true",
        help=f"print JSON lines: one object per {what}" if listing else f"print {what} as one JSON object",
    )


def print_json_lines(rows: Iterable[BaseModel | dict[str, Any]]) -> None:
    """A listing's ``--json``: one compact JSON object per line (nothing when there is none)."""
    for row in rows:
        data = row.model_dump(mode="json") if isinstance(row, BaseModel) else row
        sys.stdout.write(json.dumps(data, default=str) + "\n")


def print_json(data: Any) -> None:
    """Any command's ``--json`` that shows one thing: one JSON document."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    elif isinstance(data, list):
        data = [d.model_dump(mode="json") if isinstance(d, BaseModel) else d for d in data]
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def failure_message(exc: BaseException) -> str:
    """The innermost cause's own message in a Temporal failure chain (``WorkflowUpdateFailedError`` →
    ``ActivityError`` → ``ApplicationError``): "node9: not a node of this cluster", not "Activity task failed"."""
    messages: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(messages) < 20:
        messages.append(getattr(seen, "message", None) or str(seen))
        seen = getattr(seen, "cause", None)
    return next((m for m in reversed(messages) if m), "unknown error")


def ui_link(settings: Settings, workflow_id: str) -> str:
    return f"{settings.temporal.ui_url}/namespaces/{settings.temporal.namespace}/workflows/{workflow_id}"
