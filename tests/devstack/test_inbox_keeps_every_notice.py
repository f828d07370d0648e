"""Spec: the dev stack's webhook inbox keeps every notice POSTed to it, one JSON line each in
``<state>/notices.jsonl``; it is a component of the stack like the others (up, status, down), and the stack's
configuration sends the workers' notices to it as JSON."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lazarus.config import DevSettings, Settings
from lazarus.devstack.component import port_open
from lazarus.devstack.inbox import make_server, read_inbox
from lazarus.devstack.stack import DevStack
from lazarus.devstack.stack_config import stack_config


def _post(url: str, data: bytes) -> int:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def inbox(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    file = tmp_path / "notices.jsonl"
    server = make_server(file)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/notices", file
    server.shutdown()
    server.server_close()


def test_each_json_notice_is_kept_in_order_with_its_path(inbox: tuple[str, Path]) -> None:
    url, file = inbox
    assert _post(url, json.dumps({"id": "a", "kind": "advice-pending"}).encode()) == 200
    assert _post(url, json.dumps({"id": "b", "kind": "node-drained"}).encode()) == 200
    entries = read_inbox(file)
    assert [e.body["id"] for e in entries] == ["a", "b"]
    assert {e.path for e in entries} == {"/notices"}
    assert len(file.read_text().splitlines()) == 2


def test_a_body_that_is_not_a_json_object_is_refused_and_not_kept(inbox: tuple[str, Path]) -> None:
    url, file = inbox
    assert _post(url, b"not json") == 400
    assert _post(url, b"[1, 2]") == 400
    assert read_inbox(file) == []


def test_notices_posted_at_once_are_all_kept_whole(inbox: tuple[str, Path]) -> None:
    url, file = inbox
    threads = [
        threading.Thread(target=_post, args=(url, json.dumps({"id": str(i), "text": "x" * 2000}).encode()))
        for i in range(20)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(int(e.body["id"]) for e in read_inbox(file)) == list(range(20))


def test_no_inbox_file_yet_reads_as_no_notices(tmp_path: Path) -> None:
    assert read_inbox(tmp_path / "notices.jsonl") == []


def _dev(tmp_path: Path, **kw: object) -> DevSettings:
    return DevSettings(state_dir=tmp_path / "state", nodes=2, cluster_name="lzinbox", **kw)


def test_the_inbox_runs_with_the_workers_and_their_webhook_points_at_it(tmp_path: Path) -> None:
    stack = DevStack(_dev(tmp_path, inbox_port=47480))
    names = [c.name for c in stack.components()]
    assert names.index("temporal") < names.index("inbox") < names.index("workers")
    config = stack_config(stack.dev, stack.layout, inbox=stack.parts.inbox)
    assert config["notifications"] == {"webhooks": [{"url": "http://127.0.0.1:47480/notices", "format": "json"}]}
    Settings.model_validate(config)  # an ordinary configuration the workers load
    for off in (_dev(tmp_path, workers=False), _dev(tmp_path, inbox_port=0)):
        stack = DevStack(off)
        assert "inbox" not in [c.name for c in stack.components()]
        assert "notifications" not in stack_config(stack.dev, stack.layout, inbox=stack.parts.inbox)


def test_the_inbox_component_starts_keeps_notices_and_stops(tmp_path: Path) -> None:
    port = _free_port()
    stack = DevStack(_dev(tmp_path, inbox_port=port))
    stack.layout.create_dirs()
    inbox = next(c for c in stack.components() if c.name == "inbox")
    try:
        assert inbox.ensure(stack.layout)
        assert not inbox.ensure(stack.layout)  # up is idempotent
        status = stack.status()
        assert status.inbox_url == f"http://127.0.0.1:{port}/notices"
        assert status.notices_file == stack.layout.notices
        assert _post(status.inbox_url, json.dumps({"id": "spec", "kind": "node-drained"}).encode()) == 200
        assert [e.body["id"] for e in read_inbox(stack.layout.notices)] == ["spec"]
    finally:
        stopped = inbox.stop(stack.layout)
    assert stopped is not None and not port_open(port)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
