"""Attribution combines the logs with node-agent health (real Prometheus) and an optional external provider
(a real HTTP server on loopback); when either fails, the built-in diagnosis stands and says so."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lazarus.config import Settings
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from lazarus.telemetry.enrich import Enricher
from tests.straggler.pushed_history import now_ms
from tests.straggler.remote_write import push

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.prometheus]

UNKNOWN = Diagnosis(
    failure_kind=FailureKind.CRASH,
    category=Category.UNKNOWN,
    signature="slurm_job_failed",
    retry_advice=RetryAdvice.RETRY_SAME_NODES,
    confidence=0.4,
)


def settings(**kw) -> Settings:
    return Settings(**kw)


@pytest.fixture(scope="module")
def agents(prometheus_url):
    ts = now_ms()
    push(
        prometheus_url,
        [
            ({"__name__": "lazarus_node_health", "Hostname": "enr-1"}, [(ts, 0)]),
            ({"__name__": "lazarus_node_health", "Hostname": "enr-2"}, [(ts, 2)]),
        ],
    )
    return prometheus_url


class Provider:
    """A scripted attribution provider: answers with `reply` after `delay` seconds."""

    def __init__(self, reply: bytes, delay: float = 0.0) -> None:
        outer = self
        self.requests: list[dict] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                outer.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                time.sleep(delay)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/attribute"

    def close(self) -> None:
        self.server.shutdown()


async def test_a_node_the_agents_report_failed_is_implicated_when_logs_name_none(agents):
    enricher = Enricher(settings(prometheus={"enabled": True, "url": agents}))
    diag = await enricher.attribute(UNKNOWN, 42, 0, ["enr-1", "enr-2"])
    assert diag.implicated_nodes == ["enr-2"]
    assert diag.category == Category.HARDWARE and diag.retry_advice == RetryAdvice.RETRY_EXCLUDING_NODES
    assert "node agents report enr-2 failed" in diag.notes


async def test_prometheus_down_leaves_the_log_diagnosis_and_says_so():
    enricher = Enricher(settings(prometheus={"enabled": True, "url": "http://127.0.0.1:9", "timeout_s": 1}))
    diag = await enricher.attribute(UNKNOWN, 42, 0, ["enr-1"])
    assert diag.implicated_nodes == [] and diag.notes and "node health unavailable" in diag.notes[0]


async def test_external_provider_verdict_is_applied_within_the_job_nodes():
    provider = Provider(
        json.dumps(
            {
                "category": "infrastructure",
                "implicated_nodes": ["n3", "not-in-job"],
                "retry_advice": "retry_excluding_nodes",
            }
        ).encode()
    )
    try:
        diag = await Enricher(settings(attribution={"provider_url": provider.url})).attribute(
            UNKNOWN, 7, 1, ["n3", "n4"]
        )
    finally:
        provider.close()
    assert diag.category == Category.INFRASTRUCTURE and diag.implicated_nodes == ["n3"]
    assert provider.requests[0]["job_id"] == 7 and provider.requests[0]["diagnosis"]["signature"] == "slurm_job_failed"


@pytest.mark.parametrize("reply,delay", [(b"not json", 0.0), (b"{}", 3.0)])
async def test_slow_or_broken_provider_falls_back_to_built_in_rules(reply, delay):
    provider = Provider(reply, delay)
    try:
        enricher = Enricher(settings(attribution={"provider_url": provider.url, "timeout_s": 1}))
        diag = await enricher.attribute(UNKNOWN, 7, 1, ["n3"])
    finally:
        provider.close()
    assert diag.category == Category.UNKNOWN
    assert "built-in rules used" in diag.notes[-1]
