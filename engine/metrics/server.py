"""`--metrics-port P`: broker i's metrics at http://HOST:(P+i)/metrics, Prometheus's text format.

One endpoint per broker, as the JMX exporter runs inside each broker's JVM: dashboards and
alerts that aggregate over `instance` work unchanged, and a broker stopped through the admin
interface stops answering (its scrape's `up` goes to 0, as a dead broker's would).

The exposition is built by prometheus_client (`generate_latest`, gzip when the scraper asks)
on the event loop, where the collector may read the broker's state; HTTP is the few lines a
GET needs; `?name[]=<family>` (repeatable) answers only those families, as prometheus_client's
own servers do. Any path other than /metrics is 404; a request line or headers over 16 KiB, or
slower than 10 s, is dropped.
"""
from __future__ import annotations

import asyncio
import gzip
import logging
from urllib.parse import parse_qs

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from engine.metrics.collector import broker_collectors

log = logging.getLogger(__name__)
MAX_HEADER_BYTES = 16384


class MetricsServer:
    def __init__(self, broker, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.registry = CollectorRegistry(auto_describe=False)
        for collector in broker_collectors(broker):
            self.registry.register(collector)
        self._server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    def exposition(self, names: list[str] | None = None) -> bytes:
        """Every family, or only those named (prometheus_client's `name[]` query parameters)."""
        return generate_latest(self.registry.restricted_registry(names) if names else self.registry)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            request_line, _, header_block = head.decode("latin-1").partition("\r\n")
            parts = request_line.split(" ")
            path, _, query = parts[1].partition("?") if len(parts) == 3 else ("", "", "")
            if len(parts) != 3 or parts[0] not in ("GET", "HEAD"):
                status, body, content_type = "405 Method Not Allowed", b"GET /metrics only\n", "text/plain"
            elif path != "/metrics":
                status, body, content_type = "404 Not Found", b"metrics are at /metrics\n", "text/plain"
            else:
                names = parse_qs(query).get("name[]")
                status, body, content_type = "200 OK", self.exposition(names), CONTENT_TYPE_LATEST
            encoding = ""
            if body and "gzip" in _header(header_block, "accept-encoding"):
                body, encoding = gzip.compress(body, 1), "Content-Encoding: gzip\r\n"
            writer.write((f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{encoding}"
                          f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
                         + (body if parts[0] != "HEAD" else b""))
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError):
            pass
        except Exception:  # noqa: BLE001 - a failed scrape must not take the loop's other work down
            log.exception("Metrics request failed")
        finally:
            writer.close()


def _header(block: str, name: str) -> str:
    for line in block.split("\r\n"):
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == name:
            return value.strip().lower()
    return ""
