"""The engine's admin interface: stop and start single brokers of this process over HTTP.

This is not part of the Kafka protocol (Kafka has no API for it); tests, the console and
`python -m engine broker stop|start` use it. It listens on `--admin-port` (default: the
port after the last broker) and brokers advertise it as the read-only broker config
`engine.admin.endpoint`, so a client that only knows a bootstrap address can find it with
DescribeConfigs.

    GET  /brokers                 -> [{"id": 0, "host": ..., "port": ..., "running": true}, ...]
    POST /brokers/<id>/stop       -> controlled shutdown of one broker
    POST /brokers/<id>/start      -> start it again
    GET  /share-partitions[?group=G] -> the share partitions (of share group G, else of every
                                     share group) on the running brokers that lead them: start
                                     and end offsets, records available, acquired, acknowledged
                                     and archived in flight, and counters (deliveries, lock
                                     expiries, archived by cause). Kafka exposes these only as
                                     broker metrics; read-only.

Security: it binds to loopback unless told otherwise (`--admin-host`); every
request must carry `X-Engine-Admin-Token` (see admin_token.py), else 401; a request with an
`Origin` header comes from a web page and gets 403, whatever its token. Every call is logged
with its peer, method, path and status (never the token).

Stops and starts run one at a time: each awaits (a controlled shutdown, opening logs), and a
start that began while the same broker was still stopping would open its logs twice.
An unexpected failure answers 500 with the error, so the caller is not left without a reply.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import urllib.parse

from engine.admin_token import HEADER

log = logging.getLogger(__name__)
_ROUTE = re.compile(r"^/brokers/(\d+)/(stop|start)$")
MAX_HEADER_BYTES = 16384


class AdminServer:
    def __init__(self, engine, host: str, port: int, token: str) -> None:
        if not token:
            raise ValueError("the admin interface needs a token")
        self.engine = engine
        self.host = host
        self.port = port
        self._token = token.encode()
        self._server: asyncio.base_events.Server | None = None
        self._changing = asyncio.Lock()

    @property
    def endpoint(self) -> str:
        host = self.host
        if host in ("", "0.0.0.0", "::"):   # bound everywhere: advertise the brokers' host
            host = self.engine.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        method = path = "?"
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            if len(head) > MAX_HEADER_BYTES:
                raise ValueError("headers too large")
            request_line, headers = _parse_head(head)
            method, path = request_line
            status, body = await self._authorised(method, path, headers)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError) as exc:
            status, body = 400, {"error": f"bad request: {exc}"}
        except Exception as exc:  # noqa: BLE001 - answer, then let the log say what broke
            log.exception("Admin request failed")
            status, body = 500, {"error": repr(exc)}
        log.info("Admin call from %s:%s: %s %s -> %d", peer[0], peer[1], method, path[:200], status)
        payload = json.dumps(body).encode()
        writer.write(f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
        try:
            await writer.drain()
        finally:
            writer.close()

    async def _authorised(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, object]:
        if "origin" in headers:
            return 403, {"error": "requests from web pages (with an Origin header) are refused"}
        given = headers.get(HEADER.lower(), "").encode()
        if not hmac.compare_digest(given, self._token):
            return 401, {"error": f"missing or wrong {HEADER} header"}
        return await self._route(method, path)

    async def _route(self, method: str, path: str) -> tuple[int, object]:
        if method == "GET" and path == "/brokers":
            return 200, [self._describe(b) for b in self.engine.brokers]
        if method == "GET" and (path == "/share-partitions" or path.startswith("/share-partitions?")):
            group = urllib.parse.parse_qs(path.partition("?")[2]).get("group", [None])[0]
            return 200, [{"broker": b.node_id, **row} for b in self.engine.brokers if b.running
                         for row in b.share_manager.describe(group)]
        match = _ROUTE.match(path)
        if match is None:
            return 404, {"error": f"no route {method} {path}"}
        if method != "POST":
            return 405, {"error": "use POST"}
        node_id, action = int(match.group(1)), match.group(2)
        try:
            action_of = self.engine.stop_broker if action == "stop" else self.engine.start_broker
            async with self._changing:
                changed = await action_of(node_id)
        except KeyError as exc:
            return 404, {"error": str(exc.args[0])}
        return 200, {**self._describe(self.engine.broker(node_id)), "changed": changed}

    @staticmethod
    def _describe(broker) -> dict:
        return {"id": broker.node_id, "host": broker.host, "port": broker.port, "running": broker.running}


def _parse_head(head: bytes) -> tuple[tuple[str, str], dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 2:
        raise ValueError("no request line")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return (parts[0], parts[1]), headers


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}
