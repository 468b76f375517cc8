"""A real HTTP webhook receiver on loopback for the alert tests.

It takes each POST's JSON body and its `Idempotency-Key`, and keeps a message once per key,
as a receiver that honours the key does (`accepted`); every request is also in `requests`,
repeats included. It can be down (`stop()`, then `start()` again on the same port: an
outage), answer errors for a while (`fail_next(n, status)`), or hold requests without
answering until released (`hold()` / `release()`), so that a test can kill the sender
mid-send: `wait_holding()` returns once a held request's body has arrived.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.engine_process import free_port_range


class WebhookReceiver:
    def __init__(self) -> None:
        self.port = free_port_range(1)
        self.requests: list[dict] = []              # {"path", "key", "body"} of every request
        self.accepted: dict[str, dict] = {}         # key -> {"path", "body"}, first arrival only
        self._lock = threading.Lock()
        self._failures: list[int] = []
        self._holding = False
        self._released = threading.Event()
        self._held = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "WebhookReceiver":
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):      # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"null")
                key = self.headers.get("Idempotency-Key", "")
                status = receiver._record(self.path, key, body)
                if receiver._holding:
                    receiver._held.set()
                    receiver._released.wait(60)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def fail_next(self, count: int, status: int = 503) -> None:
        with self._lock:
            self._failures += [status] * count

    def hold(self) -> None:
        self._holding = True
        self._released.clear()
        self._held.clear()

    def wait_holding(self, timeout: float = 60) -> bool:
        return self._held.wait(timeout)

    def release(self) -> None:
        self._holding = False
        self._released.set()

    def _record(self, path: str, key: str, body) -> int:
        with self._lock:
            self.requests.append({"path": path, "key": key, "body": body})
            if self._failures:
                return self._failures.pop(0)
            self.accepted.setdefault(key, {"path": path, "body": body})
            return 200

    def bodies(self, path: str | None = None) -> list:
        with self._lock:
            return [m["body"] for m in self.accepted.values() if path is None or m["path"] == path]
