"""Spec: the demo approves through Temporal's HTTP API with the very request docs/http-api.md documents, and
the curl command it prints makes that same request; it shows a job's notices from the dev inbox, and the
workers' metrics lines that tell the recovery.

The requests go to a real HTTP receiver on loopback (the dev stack's inbox, which keeps what it is sent), so
the documented command, the printed command and the demo's own request are compared as they arrive."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lazarus.cli.demo_operator import HttpApiError, Inbox, SignalRequest, approve_request, send, story_lines
from lazarus.devstack.inbox import InboxEntry, make_server, read_inbox

DOCS = Path(__file__).resolve().parents[2] / "docs" / "http-api.md"
RUNNABLE = re.compile(r"<!-- run: (?P<name>[a-z-]+) -->\n```sh\n(?P<body>.*?)```", re.S)


@pytest.fixture
def capture(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A loopback receiver standing in for Temporal's HTTP API: it keeps each request's path and body."""
    file = tmp_path / "requests.jsonl"
    server = make_server(file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", file
    server.shutdown()
    server.server_close()


def _bash(script: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(["bash", "-c", script], env={**os.environ, **(env or {})}, check=True, capture_output=True)


def test_the_demos_approval_is_the_documented_signal_and_its_curl_makes_the_same_request(
    capture: tuple[str, Path],
) -> None:
    url, file = capture
    documented = next(m["body"] for m in RUNNABLE.finditer(DOCS.read_text()) if m["name"] == "approve")
    variables = {
        "TEMPORAL_HTTP_API": url,
        "TEMPORAL_NAMESPACE": "default",
        "WORKFLOW_ID": "lazarus-lazarus-7",
        "JOB": "7",
        "CLUSTER": "lazarus",
        "GENERATION": "2",
    }
    _bash(documented, variables)
    request = approve_request(url, "default", "lazarus-lazarus-7", 7, "lazarus", 2, "alice")
    send(request)
    _bash(request.curl())

    docs, sent, printed = read_inbox(file)
    assert (
        docs.path
        == sent.path
        == printed.path
        == "/api/v1/namespaces/default/workflows/lazarus-lazarus-7/signal/approve_advice"
    )
    assert sent.body == printed.body
    (doc_answer,), (answer,) = docs.body["input"], sent.body["input"]
    assert doc_answer.keys() == answer.keys()
    assert {k: answer[k] for k in ("generation", "job_id", "cluster", "operator")} == {
        k: doc_answer[k] for k in ("generation", "job_id", "cluster", "operator")
    }
    assert docs.body["identity"] == sent.body["identity"] == "alice"


def test_the_inbox_view_shows_only_this_jobs_notices_received_after_the_mark(tmp_path: Path) -> None:
    file = tmp_path / "notices.jsonl"

    def keep(body: dict[str, object]) -> None:
        with open(file, "a") as f:
            f.write(InboxEntry(received_at="2026-01-01T00:00:00Z", path="/notices", body=body).model_dump_json() + "\n")

    keep({"workflow_id": "lazarus-c-1", "kind": "advice-pending", "generation": 1})
    inbox = Inbox(file, "lazarus-c-1", Inbox.mark(file))
    keep({"workflow_id": "lazarus-c-2", "kind": "advice-pending", "generation": 1})
    keep({"workflow_id": "lazarus-c-1", "kind": "advice-pending", "generation": 2})
    assert [e.body["generation"] for e in inbox.new()] == [2]
    assert inbox.new() == []
    assert inbox.has("advice-pending", 2) and not inbox.has("advice-pending", 1) and not inbox.has("node-drained")
    assert Inbox(None, "lazarus-c-1", 0).new() == []


def test_metrics_lines_keep_the_recoverys_samples_without_buckets_zeros_or_the_sdks_labels() -> None:
    exposition = "\n".join(
        [
            "# HELP lazarus_recoveries_total How each incident ended",
            "# TYPE lazarus_recoveries_total counter",
            'lazarus_recoveries_total{cluster="c",namespace="default",outcome="restarted",task_queue="q"} 1',
            'lazarus_recoveries_total{cluster="c",outcome="stopped"} 0',
            'lazarus_action_latency_seconds_bucket{cluster="c",until="requeue_verified",le="0.5"} 1',
            'lazarus_action_latency_seconds_count{cluster="c",until="requeue_verified",workflow_type="J"} 1',
            'lazarus_action_latency_seconds_sum{cluster="c",until="requeue_verified",service_name="s"} 0.2',
            'lazarus_drains_total{by="lazarus",cluster="c"} 1',
            'temporal_workflow_completed{cluster="c"} 3',
            "lazarus_nodes_drained 1",
        ]
    )
    assert story_lines(exposition) == [
        'lazarus_recoveries_total{cluster="c",outcome="restarted"} 1',
        'lazarus_action_latency_seconds_count{cluster="c",until="requeue_verified"} 1',
        'lazarus_action_latency_seconds_sum{cluster="c",until="requeue_verified"} 0.2',
        'lazarus_drains_total{by="lazarus",cluster="c"} 1',
        "lazarus_nodes_drained 1",
    ]


def test_an_unreachable_http_api_is_one_clear_error() -> None:
    with pytest.raises(HttpApiError, match=r"^Temporal's HTTP API at \S+ could not be reached"):
        send(SignalRequest(url="http://127.0.0.1:1/api/v1", body={}), timeout=2)
