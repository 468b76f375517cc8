"""The Engine's lifecycle outside the happy path."""
import asyncio
import socket

import pytest

from engine.runtime import Engine
from tests.support.engine_process import free_port_range


def test_stop_after_a_start_that_failed_on_a_taken_port_releases_everything(tmp_path):
    """A taken port makes start() fail part-way (the first broker listening, the second not);
    stop() must then close what did start, instead of raising AttributeError on the
    periodic rebalancer that was never created."""
    port = free_port_range(3)
    taken = socket.socket()
    taken.bind(("127.0.0.1", port + 1))
    taken.listen()

    async def start_then_stop():
        engine = Engine(tmp_path / "data", brokers=2, port=port, admin=False)
        with pytest.raises(OSError):
            await engine.start()
        await engine.stop()

    try:
        asyncio.run(start_then_stop())
    finally:
        taken.close()
    with socket.socket() as again:          # the first broker's listener was closed by stop()
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))
    # and the metadata was closed cleanly: the next start on the same data dir works
    asyncio.run(_start_and_stop(Engine(tmp_path / "data", brokers=2, port=port, admin=False)))


async def _start_and_stop(engine: Engine) -> None:
    await engine.start()
    assert all(b.running for b in engine.brokers)
    await engine.stop()
