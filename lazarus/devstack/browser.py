"""Headless Chromium (Debian ``chromium``) against the Temporal UI: a page's rendered text, or a screenshot.

The UI is a single-page app: the HTML the server sends is empty until its scripts have fetched the workflow
and rendered it. ``--virtual-time-budget`` lets the page run (fetches, renders) until it has been idle for
that much virtual time before the DOM is dumped or the screenshot taken. A *running* workflow's page
long-polls its history, which keeps the page from ever idling, so render closed workflows (a recovered job
has completed). Used by ``scripts/ui_screenshots.py`` and the UI test (tests/e2e).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from lazarus.errors import DevStackError

RENDER_BUDGET_MS = 10_000  # virtual time the page may take to fetch and render
TIMEOUT_S = 60  # wall-clock bound on one chromium run
WINDOW = (1440, 1100)


def chromium() -> str:
    """The chromium binary; a one-sentence error when it is not installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise DevStackError("chromium is not installed: run `make deps` (Debian package chromium)")
    return found


def _run(args: list[str], url: str, window: tuple[int, int] = WINDOW) -> str:
    argv = [
        chromium(),
        "--headless",
        "--no-sandbox",  # root in containers and CI: the sandbox cannot start there
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        f"--window-size={window[0]},{window[1]}",
        f"--virtual-time-budget={RENDER_BUDGET_MS}",
        *args,
        url,
    ]
    env = os.environ | {"DBUS_SESSION_BUS_ADDRESS": "disabled:"}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        raise DevStackError(f"chromium did not finish rendering {url} within {TIMEOUT_S} s") from exc
    if done.returncode != 0:
        raise DevStackError(f"chromium failed on {url} (exit {done.returncode})")
    return done.stdout


def rendered_dom(url: str) -> str:
    """The page's DOM once the app has rendered it."""
    return _run(["--dump-dom"], url)


def visible_text(dom: str) -> str:
    """The text of a DOM (scripts and styles dropped, entities decoded), whitespace collapsed to single spaces."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S | re.I)
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def screenshot(url: str, path: Path, window: tuple[int, int] = WINDOW) -> Path:
    """A PNG of the rendered page, ``window`` (width, height) in pixels."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    _run([f"--screenshot={path}"], url, window)
    if not path.exists():
        raise DevStackError(f"chromium wrote no screenshot of {url}")
    return path


def run_url(ui_url: str, namespace: str, workflow_id: str, run_id: str, tab: str = "history") -> str:
    """A tab of one run's UI page: ``history`` (the events), ``user-metadata`` (summary, details, current
    details)."""
    return f"{ui_url.rstrip('/')}/namespaces/{namespace}/workflows/{workflow_id}/{run_id}/{tab}"


def embedded_markdown(dom: str) -> dict[str, str]:
    """The Markdown the UI renders in frames of its own (user metadata), by frame id: the frames' content is
    in their ``src`` (``/render?content=...``), not in the page's text."""
    found = {}
    for frame in re.finditer(r"<iframe\b[^>]*>", dom):
        tag = frame.group(0)
        ident, src = re.search(r'\bid="([^"]*)"', tag), re.search(r'\bsrc="([^"]*)"', tag)
        if ident and src:
            content = parse_qs(urlsplit(html.unescape(src.group(1))).query).get("content")
            if content:
                found[html.unescape(ident.group(1))] = content[0]
    return found
