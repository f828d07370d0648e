"""A real webhook receiver on loopback for the notification tests: an ``http.server`` in a thread that
records every POST. Path ``/json`` and ``/slack`` always answer 200; ``/flaky`` answers 500 to the first
delivery of each notice (by its ``id``) and 200 after, so a retry can be seen."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Post:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class Receiver:
    posts: list[Post] = field(default_factory=list)
    _failed_once: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with receiver._lock:
                    receiver.posts.append(Post(self.path, body, dict(self.headers.items())))
                    fail = self.path == "/flaky" and body.get("id") not in receiver._failed_once
                    if fail:
                        receiver._failed_once.add(body.get("id"))
                self.send_response(500 if fail else 200)
                self.end_headers()
                self.wfile.write(b"no" if fail else b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def bodies(self, path: str) -> list[dict[str, Any]]:
        with self._lock:
            return [p.body for p in self.posts if p.path == path]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
