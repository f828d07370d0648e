"""Spec: a notice reaches each webhook in its format, generic JSON or Slack's {"text": ...}, with a link to
the workflow's history in the Temporal UI; a webhook gets only the kinds it subscribed to; its URL may come
from a file and its credentials go in a header; a failure names the webhook by position, never its URL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lazarus.config import load_settings
from lazarus.errors import ConfigError
from lazarus.models.notify import Notice, NoticeKind
from lazarus.notify import deliver, workflow_url
from tests.e2e.receiver import Receiver

NOTICE = Notice(
    id="lazarus-east-42/awaiting-approval/1",
    kind=NoticeKind.ADVICE_PENDING,
    cluster="east",
    text="job 42 (train, alice): advice 1 (restart) awaits approval: hardware failure on node2",
    at=datetime(2026, 5, 1, 9, 30, tzinfo=UTC),
    workflow_id="lazarus-east-42",
    job_id=42,
    generation=1,
    action="restart",
    nodes=["node2"],
    reason="hardware failure on node2",
)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.stop()


def _settings(*webhooks: dict, ui_url: str = "https://temporal.example.com/") -> object:
    return load_settings(
        cluster="east",
        temporal={"ui_url": ui_url, "namespace": "recovery"},
        notifications={"webhooks": list(webhooks)},
    )


def test_the_link_opens_the_workflow_in_the_ui():
    settings = _settings()
    assert workflow_url(settings.temporal, "lazarus-east-42") == (
        "https://temporal.example.com/namespaces/recovery/workflows/lazarus-east-42"
    )


def test_json_carries_the_notice_its_title_and_the_link_and_slack_gets_text(receiver: Receiver):
    settings = _settings({"url": f"{receiver.url}/json"}, {"url": f"{receiver.url}/slack", "format": "slack"})
    delivered, skipped, failures = asyncio.run(deliver(settings, NOTICE, set()))
    assert (delivered, skipped, failures) == ([0, 1], [], [])
    (body,) = receiver.bodies("/json")
    link = "https://temporal.example.com/namespaces/recovery/workflows/lazarus-east-42"
    assert body["link"] == link and body["title"] == "advice awaits approval"
    assert body["kind"] == "advice-pending" and body["generation"] == 1 and body["nodes"] == ["node2"]
    (slack,) = receiver.bodies("/slack")
    assert list(slack) == ["text"]
    assert slack["text"].startswith("*Lazarus (east): advice awaits approval* ")
    assert f"<{link}|job 42>" in slack["text"] and NOTICE.text in slack["text"]


@pytest.mark.parametrize("kind", list(NoticeKind))
def test_every_kind_of_notice_reaches_both_formats_with_its_title(receiver: Receiver, kind: NoticeKind):
    settings = _settings({"url": f"{receiver.url}/json"}, {"url": f"{receiver.url}/slack", "format": "slack"})
    notice = NOTICE.model_copy(update={"kind": kind})
    assert asyncio.run(deliver(settings, notice, set())) == ([0, 1], [], [])
    (body,) = receiver.bodies("/json")
    assert body["kind"] == kind.value and body["title"]


def test_a_webhook_gets_only_the_kinds_it_subscribed_to(receiver: Receiver):
    settings = _settings({"url": f"{receiver.url}/json", "events": ["node-drained"]}, {"url": f"{receiver.url}/slack"})
    delivered, skipped, _ = asyncio.run(deliver(settings, NOTICE, set()))
    assert (delivered, skipped) == ([1], [0])
    assert receiver.bodies("/json") == []


def test_webhooks_already_served_are_skipped(receiver: Receiver):
    settings = _settings({"url": f"{receiver.url}/json"}, {"url": f"{receiver.url}/slack"})
    delivered, _, _ = asyncio.run(deliver(settings, NOTICE, {0}))
    assert delivered == [1] and receiver.bodies("/json") == []


def test_the_url_may_come_from_a_file_and_a_token_goes_in_a_header(receiver: Receiver, tmp_path: Path):
    (tmp_path / "url").write_text(f"{receiver.url}/json\n")
    (tmp_path / "token").write_text("s3cret\n")
    settings = _settings({"url_file": str(tmp_path / "url"), "bearer_token_file": str(tmp_path / "token")})
    assert asyncio.run(deliver(settings, NOTICE, set()))[0] == [0]
    (post,) = receiver.posts
    assert post.headers["Authorization"] == "Bearer s3cret"


def test_a_failing_webhook_is_named_by_position_without_its_url(receiver: Receiver):
    settings = _settings({"url": f"{receiver.url}/flaky"}, {"url": "http://127.0.0.1:9/secret-token-path"})
    delivered, _, failures = asyncio.run(deliver(settings, NOTICE, set()))
    assert delivered == []
    assert failures == ["webhook 0 answered HTTP 500", "webhook 1 could not be reached (ConnectionRefusedError)"]
    assert not any("secret" in f or receiver.url in f for f in failures)


def test_a_missing_url_file_is_a_configuration_error(tmp_path: Path):
    settings = _settings({"url_file": str(tmp_path / "missing")})
    with pytest.raises(ConfigError, match="webhook URL file"):
        asyncio.run(deliver(settings, NOTICE, set()))


def test_a_webhook_names_exactly_one_url():
    with pytest.raises(ConfigError, match="give exactly one of url and url_file"):
        load_settings(notifications={"webhooks": [{"format": "slack"}]})
    with pytest.raises(ConfigError, match="events"):
        load_settings(notifications={"webhooks": [{"url": "http://x", "events": ["everything"]}]})
