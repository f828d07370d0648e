"""What the demo shows from an operator's side: the notices the dev stack's inbox received, an approval sent
through Temporal's own HTTP API (docs/http-api.md), and the workers' metrics after the recovery.

Nothing here talks to Temporal through the SDK: the approval is the plain HTTP request that the documented
``curl`` command makes, so the demo proves the operator's path, not the CLI's.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from lazarus.devstack.inbox import InboxEntry, read_inbox
from lazarus.errors import LazarusError

# Metric families an operator looks at after a recovery (docs/metrics.md): how recoveries ended, how fast the
# failure was seen and acted on, what was detected and drained.
STORY_METRICS = (
    "lazarus_recoveries_total",
    "lazarus_detections_total",
    "lazarus_detection_latency_seconds",
    "lazarus_action_latency_seconds",
    "lazarus_drains_total",
    "lazarus_nodes_drained",
    "lazarus_advice_answers_total",
)
# Labels the Temporal SDK's exporter adds to every workflow metric; the same for all of the story's samples.
SDK_LABELS = frozenset({"namespace", "service_name", "task_queue", "workflow_type"})
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(?P<key>[a-zA-Z_][a-zA-Z0-9_]*)="(?P<value>(?:[^"\\]|\\.)*)"')


class HttpApiError(LazarusError):
    """Temporal's HTTP API did not take the request."""


class Inbox:
    """The notices of one job that the dev stack's inbox received since the demo began."""

    def __init__(self, file: Path | None, workflow_id: str, offset: int) -> None:
        self.file = file
        self.workflow_id = workflow_id
        self._offset = offset
        self.shown: list[InboxEntry] = []

    @staticmethod
    def mark(file: Path | None) -> int:
        """How many notices the inbox holds now: the ones after this mark are the demo's."""
        return len(read_inbox(file)) if file else 0

    def new(self) -> list[InboxEntry]:
        """This job's notices received since the last call."""
        if self.file is None:
            return []
        entries = read_inbox(self.file)
        fresh, self._offset = entries[self._offset :], len(entries)
        mine = [e for e in fresh if e.body.get("workflow_id") == self.workflow_id]
        self.shown += mine
        return mine

    def has(self, kind: str, generation: int | None = None) -> bool:
        return any(
            e.body.get("kind") == kind and (generation is None or e.body.get("generation") == generation)
            for e in self.shown
        )


def render_notice(entry: InboxEntry) -> str:
    body = entry.body
    return (
        f"  [{datetime.now():%H:%M:%S}] notice received by the webhook ({body.get('kind')}): "
        f"{body.get('title')}: {body.get('text')}\n      link: {body.get('link')}"
    )


async def wait_for_notice(inbox: Inbox, kind: str, generation: int | None, timeout: float) -> bool:
    """Print this job's new notices until one of ``kind`` (and ``generation``) is among them; False on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        for entry in inbox.new():
            print(render_notice(entry))
        if inbox.has(kind, generation) or time.monotonic() > deadline:
            return inbox.has(kind, generation)
        await asyncio.sleep(0.3)


class SignalRequest(BaseModel):
    """One signal sent through Temporal's HTTP API: where, and the JSON body."""

    model_config = ConfigDict(frozen=True)

    url: str
    body: dict[str, object]

    def curl(self) -> str:
        """The documented curl command (docs/http-api.md) that makes the very same request."""
        return f'curl -sS --fail-with-body -X POST --data @- \\\n  "{self.url}" <<EOF\n{json.dumps(self.body)}\nEOF'


def approve_request(
    http_api_url: str, namespace: str, workflow_id: str, job_id: int, cluster: str, generation: int, operator: str
) -> SignalRequest:
    """The ``approve_advice`` signal over Temporal's HTTP API, payload as docs/http-api.md gives it."""
    path = "/".join(
        urllib.parse.quote(part, safe="")
        for part in ("api", "v1", "namespaces", namespace, "workflows", workflow_id, "signal", "approve_advice")
    )
    answer = {
        "generation": generation,
        "operator": operator,
        "comment": "approved over Temporal's HTTP API (lazarus demo)",
        "job_id": job_id,
        "cluster": cluster,
    }
    return SignalRequest(url=f"{http_api_url.rstrip('/')}/{path}", body={"input": [answer], "identity": operator})


def send(request: SignalRequest, timeout: float = 10) -> str:
    """POST the request as curl would; returns Temporal's answer, or raises :class:`HttpApiError`."""
    data = json.dumps(request.body).encode()
    http = urllib.request.Request(request.url, data=data, method="POST")
    try:
        with urllib.request.urlopen(http, timeout=timeout) as answer:
            return str(answer.read(4096).decode(errors="replace"))
    except urllib.error.HTTPError as exc:
        raise HttpApiError(
            f"Temporal's HTTP API answered {exc.code}: {exc.read(300).decode(errors='replace')}"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise HttpApiError(f"Temporal's HTTP API at {request.url} could not be reached ({exc})") from None


def story_lines(text: str, families: tuple[str, ...] = STORY_METRICS) -> list[str]:
    """The samples of ``families`` in a Prometheus exposition, without histogram buckets, zero values or the
    SDK's own labels (:data:`SDK_LABELS`)."""
    lines = []
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m or m["name"].endswith("_bucket") or m["name"].endswith("_created"):
            continue
        if any(m["name"] == f or m["name"].startswith(f + "_") for f in families):
            try:
                if float(m["value"]) == 0:
                    continue
            except ValueError:
                continue
            labels = ",".join(
                f'{label["key"]}="{label["value"]}"'
                for label in _LABEL.finditer(m["labels"] or "")
                if label["key"] not in SDK_LABELS
            )
            lines.append(f"{m['name']}{{{labels}}} {m['value']}" if labels else f"{m['name']} {m['value']}")
    return lines


def scrape(url: str, timeout: float = 5) -> str:
    """One metrics endpoint's exposition text, or "" when it does not answer."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return str(answer.read().decode(errors="replace"))
    except (urllib.error.URLError, OSError):
        return ""


async def read_story_metrics(
    urls: list[str], until: Callable[[list[str]], bool], timeout: float
) -> dict[str, list[str]]:
    """The story's samples from each endpoint, read again until ``until`` holds for them all (or time is up)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {url: story_lines(await asyncio.to_thread(scrape, url)) for url in urls}
        if until([line for lines in found.values() for line in lines]) or time.monotonic() > deadline:
            return found
        await asyncio.sleep(1.0)
