"""The admin interface, in-process with a stand-in engine."""
import asyncio
from types import SimpleNamespace

from engine.admin_server import AdminServer


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


async def post(port: int, path: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    answer = await reader.read()
    writer.close()
    return answer


def run_with_server(engine, scenario):
    async def main():
        server = AdminServer(engine, "127.0.0.1", 0)
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
