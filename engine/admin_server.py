"""The engine's admin interface: stop and start single brokers of this process over HTTP.

This is not part of the Kafka protocol (Kafka has no API for it); tests, the console and
`python -m engine broker stop|start` use it. It listens on `--admin-port` (default: the
port after the last broker) and brokers advertise it as the read-only broker config
`engine.admin.endpoint`, so a client that only knows a bootstrap address can find it with
DescribeConfigs.

    GET  /brokers                 -> [{"id": 0, "host": ..., "port": ..., "running": true}, ...]
    POST /brokers/<id>/stop       -> controlled shutdown of one broker
    POST /brokers/<id>/start      -> start it again

Stops and starts run one at a time: each awaits (a controlled shutdown, opening logs), and a
start that began while the same broker was still stopping would open its logs twice.
An unexpected failure answers 500 with the error, so the caller is not left without a reply.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re

log = logging.getLogger(__name__)
_ROUTE = re.compile(r"^/brokers/(\d+)/(stop|start)$")
MAX_HEADER_BYTES = 16384


class AdminServer:
    def __init__(self, engine, host: str, port: int) -> None:
        self.engine = engine
        self.host = host
        self.port = port
        self._server: asyncio.base_events.Server | None = None
        self._changing = asyncio.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            if len(head) > MAX_HEADER_BYTES:
                raise ValueError("headers too large")
            method, path = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")[:2]
            status, body = await self._route(method, path)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError) as exc:
            status, body = 400, {"error": f"bad request: {exc}"}
        except Exception as exc:  # noqa: BLE001 - answer, then let the log say what broke
            log.exception("Admin request failed")
            status, body = 500, {"error": repr(exc)}
        payload = json.dumps(body).encode()
        writer.write(f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
        try:
            await writer.drain()
        finally:
            writer.close()

    async def _route(self, method: str, path: str) -> tuple[int, object]:
        if method == "GET" and path == "/brokers":
            return 200, [self._describe(b) for b in self.engine.brokers]
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


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}
