"""The dev stack's webhook inbox: a loopback HTTP receiver that keeps every notice it is sent.

``dev up`` starts it (``python -m lazarus.devstack.inbox``) on 127.0.0.1:``dev.inbox_port`` and points the
stack's ``notifications.webhooks`` at it (JSON format), so the notices the workers post (advice awaiting
approval, a node drained, ...) land in ``<state>/notices.jsonl``, one :class:`InboxEntry` per line, where the
demo and an operator trying the stack read them (``tail -f``). It answers every POST whose body is a JSON
object with 200; anything else is answered 400 and not kept. It serves nothing and forwards nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lazarus.config import DevSettings
from lazarus.devstack.component import Component, port_open
from lazarus.devstack.layout import Layout

# A notice is well under 4 KiB; a body larger than this is not a notice.
MAX_BODY_BYTES = 1 << 20
INBOX_PATH = "/notices"


class InboxEntry(BaseModel):
    """One line of ``notices.jsonl``: what was received, where and when."""

    model_config = ConfigDict(extra="forbid")

    received_at: datetime
    path: str
    body: dict[str, Any]


def inbox_url(dev: DevSettings) -> str:
    """The URL the stack's webhook posts to."""
    return f"http://127.0.0.1:{dev.inbox_port}{INBOX_PATH}"


def read_inbox(file: Path) -> list[InboxEntry]:
    """Every entry kept so far (none when the file does not exist yet); a torn last line is skipped."""
    try:
        lines = file.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []
    entries = []
    for line in lines:
        try:
            entries.append(InboxEntry.model_validate_json(line))
        except ValidationError:
            continue
    return entries


def make_server(file: Path, address: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server that appends each JSON object POSTed to it to ``file`` (port 0: any free port)."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._answer(413, "too large")
                return
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError:
                body = None
            if not isinstance(body, dict):
                self._answer(400, "a notice is one JSON object")
                return
            entry = InboxEntry(received_at=datetime.now(UTC), path=self.path, body=body)
            with lock, open(file, "a") as out:
                out.write(entry.model_dump_json() + "\n")
            self._answer(200, "ok")

        def _answer(self, code: int, text: str) -> None:
            data = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            print(f"{self.address_string()} {format % args}", flush=True)

    file.parent.mkdir(parents=True, exist_ok=True)
    return ThreadingHTTPServer((address, port), Handler)


def inbox_component(dev: DevSettings, layout: Layout, env: dict[str, str]) -> Component:
    """The inbox as a component of the stack, on 127.0.0.1:``dev.inbox_port``."""
    port = dev.inbox_port
    return Component(
        name="inbox",
        argv=[
            sys.executable,
            "-m",
            "lazarus.devstack.inbox",
            "--port",
            str(port),
            "--file",
            str(layout.notices),
        ],
        env=env,
        port=port,
        ready=lambda: port_open(port),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--file", type=Path, required=True, help="append each notice here (JSON lines)")
    args = parser.parse_args(argv)
    server = make_server(args.file, port=args.port)
    print(f"inbox: listening on 127.0.0.1:{args.port}, keeping notices in {args.file}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
