"""The admin interface, in-process with a stand-in engine; and its token and bind address."""
import asyncio
import logging
import os
import stat
from types import SimpleNamespace

import pytest

from engine import admin_token
from engine.admin_server import AdminServer
from engine.runtime import Engine

TOKEN = "s3cret-token"


class SlowEngine:
    """Stops and starts that take a while, recording when each begins and ends."""

    def __init__(self) -> None:
        self.broker_ = SimpleNamespace(node_id=0, host="127.0.0.1", port=1, running=True)
        self.brokers = [self.broker_]
        self.events: list[str] = []

    def broker(self, node_id: int):
        return self.broker_

    async def stop_broker(self, node_id: int) -> bool:
        self.events.append("stop begins")
        self.broker_.running = False
        await asyncio.sleep(0.05)          # a controlled shutdown awaits its fetchers and listener
        self.events.append("stop ends")
        return True

    async def start_broker(self, node_id: int) -> bool:
        if self.broker_.running:
            return False
        self.events.append("start begins")
        await asyncio.sleep(0)
        self.broker_.running = True
        self.events.append("start ends")
        return True

    async def fail(self, node_id: int) -> bool:
        raise OSError("address already in use")


async def post(port: int, path: str, headers: dict | None = None, method: str = "POST") -> bytes:
    headers = {"X-Engine-Admin-Token": TOKEN} if headers is None else headers
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\n{lines}\r\n".encode())
    answer = await reader.read()
    writer.close()
    return answer


def run_with_server(engine, scenario):
    async def main():
        server = AdminServer(engine, "127.0.0.1", 0, TOKEN)
        await server.start()
        port = server._server.sockets[0].getsockname()[1]
        try:
            return await scenario(port)
        finally:
            await server.stop()
    return asyncio.run(main())


def test_a_start_sent_while_the_broker_stops_waits_for_the_stop():
    engine = SlowEngine()

    async def scenario(port):
        return await asyncio.gather(post(port, "/brokers/0/stop"), post(port, "/brokers/0/start"))

    answers = run_with_server(engine, scenario)
    assert all(a.startswith(b"HTTP/1.1 200") for a in answers)
    assert engine.events == ["stop begins", "stop ends", "start begins", "start ends"]


def test_an_unexpected_failure_is_answered_with_500():
    engine = SlowEngine()
    engine.start_broker = engine.fail
    engine.broker_.running = False

    answer = run_with_server(engine, lambda port: post(port, "/brokers/0/start"))
    assert answer.startswith(b"HTTP/1.1 500")
    assert b"address already in use" in answer


@pytest.mark.parametrize("headers", [{}, {"X-Engine-Admin-Token": "wrong"}, {"X-Engine-Admin-Token": ""}])
def test_a_request_without_the_right_token_is_refused_and_changes_nothing(headers):
    engine = SlowEngine()
    answer = run_with_server(engine, lambda port: post(port, "/brokers/0/stop", headers))
    assert answer.startswith(b"HTTP/1.1 401")
    assert engine.broker_.running and engine.events == []


def test_a_request_from_a_web_page_is_refused_even_with_the_token():
    """A cross-origin `no-cors` POST carries an Origin header; so does any fetch() from a page."""
    engine = SlowEngine()
    headers = {"X-Engine-Admin-Token": TOKEN, "Origin": "http://evil.example"}
    answer = run_with_server(engine, lambda port: post(port, "/brokers/0/stop", headers))
    assert answer.startswith(b"HTTP/1.1 403")
    assert engine.broker_.running and engine.events == []


def test_every_call_is_logged_without_the_token(caplog):
    engine = SlowEngine()
    with caplog.at_level(logging.INFO, logger="engine.admin_server"):
        run_with_server(engine, lambda port: post(port, "/brokers/0/stop"))
        run_with_server(engine, lambda port: post(port, "/brokers", {}, method="GET"))
    lines = [r.getMessage() for r in caplog.records]
    assert any("POST /brokers/0/stop -> 200" in line for line in lines), lines
    assert any("GET /brokers -> 401" in line for line in lines), lines
    assert not any(TOKEN in line for line in lines)


def test_the_token_is_created_once_with_mode_0600(tmp_path, monkeypatch):
    monkeypatch.delenv(admin_token.ENV, raising=False)
    first = admin_token.load_or_create(tmp_path)
    path = tmp_path / "admin.token"
    assert len(first) >= 32
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert admin_token.load_or_create(tmp_path) == first      # the file wins at the next start
    monkeypatch.setenv(admin_token.ENV, "from-env")
    assert admin_token.load_or_create(tmp_path) == first
    assert admin_token.load_or_create(tmp_path / "fresh") == "from-env"
    assert (tmp_path / "fresh" / "admin.token").read_text().strip() == "from-env"


def test_the_admin_interface_binds_to_loopback_by_default(tmp_path):
    engine = Engine(tmp_path / "data", brokers=1, host="0.0.0.0", port=1)
    assert engine.admin.host == "127.0.0.1"
    assert engine.admin._token == (tmp_path / "data" / "admin.token").read_text().strip().encode()
