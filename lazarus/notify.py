"""Posting notices to webhooks: generic JSON or Slack-compatible text, each with a link to the workflow's
history in the Temporal UI.

Used by the ``notify`` activity (activities/notify.py). Every webhook gets its own
timeout; credentials and CA bundles work as for Prometheus (:mod:`lazarus.http_auth`).
A webhook's URL may come from a file, since a Slack webhook URL is itself a secret; no
URL, token or password is ever put in a message or a log line (errors name the
webhook by its position in the configuration).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from lazarus.config import Settings, TemporalSettings, Webhook
from lazarus.errors import ConfigError, LazarusError
from lazarus.http_auth import HttpAuth, http_auth, read_secret_file
from lazarus.models.notify import Notice

_TITLES = {
    "advice-pending": "advice awaits approval",
    "job-stopped": "job stopped",
    "job-failed": "Lazarus could not act",
    "node-drained": "node drained",
    "drain-refused": "drain refused by the budget",
    "spares-short": "spare pool short of healthy nodes",
}


class WebhookFailed(LazarusError):
    """A webhook did not take the notice (connection failed, timed out, or answered an HTTP error)."""


def workflow_url(temporal: TemporalSettings, workflow_id: str) -> str:
    """The workflow's page (its history) in the Temporal UI."""
    quoted = urllib.parse.quote(workflow_id, safe="")
    return f"{temporal.ui_url.rstrip('/')}/namespaces/{temporal.namespace}/workflows/{quoted}"


def payload(notice: Notice, link: str, form: str) -> dict[str, object]:
    """The body for one webhook: the notice as JSON with its link, or Slack's ``{"text": ...}``."""
    if form == "slack":
        subject = f"job {notice.job_id}" if notice.job_id is not None else f"node {notice.node}"
        return {"text": f"*Lazarus ({notice.cluster}): {_TITLES[notice.kind.value]}* <{link}|{subject}>: {notice.text}"}
    return {**notice.model_dump(mode="json"), "title": _TITLES[notice.kind.value], "link": link}


@dataclass(frozen=True)
class _Target:
    index: int
    url: str
    auth: HttpAuth
    webhook: Webhook


def _targets(settings: Settings) -> list[_Target]:
    """Every configured webhook with its URL and credentials read now (files are read at each call)."""
    targets = []
    for index, webhook in enumerate(settings.notifications.webhooks):
        url = webhook.url if webhook.url_file is None else read_secret_file(webhook.url_file, "webhook URL")
        assert url is not None  # the settings give exactly one of url and url_file
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"the webhook URL file {webhook.url_file} must hold an http(s) URL")
        targets.append(_Target(index, url, http_auth(webhook, f"webhook {index}"), webhook))
    return targets


def _post(target: _Target, body: bytes) -> None:
    headers = {"Content-Type": "application/json", "User-Agent": "lazarus-notify", **target.auth.header_values()}
    request = urllib.request.Request(target.url, data=body, headers=headers, method="POST")
    context = target.auth.ssl_context() if target.url.startswith("https://") else None
    try:
        with urllib.request.urlopen(request, timeout=target.webhook.timeout_s, context=context) as answer:
            answer.read(4096)
    except urllib.error.HTTPError as exc:
        raise WebhookFailed(f"webhook {target.index} answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise WebhookFailed(f"webhook {target.index} could not be reached ({type(reason).__name__})") from None


async def deliver(settings: Settings, notice: Notice, skip: set[int]) -> tuple[list[int], list[int], list[str]]:
    """Post ``notice`` to every webhook subscribed to its kind, except those in ``skip`` (already delivered).

    Returns the webhooks that took it now, those not subscribed to the kind, and one line per failure.
    """
    link = workflow_url(settings.temporal, notice.workflow_id)
    delivered: list[int] = []
    unsubscribed: list[int] = []
    failures: list[str] = []
    for target in _targets(settings):
        if target.webhook.events and notice.kind not in target.webhook.events:
            unsubscribed.append(target.index)
            continue
        if target.index in skip:
            continue
        body = json.dumps(payload(notice, link, target.webhook.format)).encode()
        try:
            await asyncio.to_thread(_post, target, body)
        except WebhookFailed as exc:
            failures.append(str(exc))
            continue
        delivered.append(target.index)
    return delivered, unsubscribed, failures
