"""`queued.max.request.bytes`: clients sending big requests at once cannot make a broker hold
more than its pool; the others wait before their bodies are read, and are served once the
memory comes back (engine/protocol/request_memory.py)."""
from __future__ import annotations

import asyncio
import select

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from engine.protocol.request_memory import RequestMemoryPool
from tests.engine.metrics.test_metrics_endpoint import samples, scrape
from tests.engine.protocol.test_pre_authentication import send_prefix_and_body
from tests.support.engine_process import EngineProcess, free_port_range
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

POOL = 4 * 1024 * 1024
CLAIMED = 20 * 1024 * 1024            # each hostile request's size prefix
SENT = 2 * 1024 * 1024                # of which each sends this much, then stalls
HOSTILE = 6


@pytest.fixture(scope="module")
def pooled_engine(tmp_path_factory):
    port = free_port_range(1)
    engine = EngineProcess(tmp_path_factory.mktemp("request-memory") / "data", brokers=1,
                           configs={"queued.max.request.bytes": str(POOL)},
                           extra_args=["--metrics-port", str(port)]).start()
    engine.metrics_port = port
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def pool(engine) -> dict[str, float]:
    found = samples(scrape(engine, 0))
    return {name.rsplit("_", 1)[-1]: value for (name, _), value in found.items()
            if name.startswith("kafka_network_socketserver_memorypool")}


def test_big_requests_wait_for_memory_and_the_rest_are_served_once_it_is_back(pooled_engine):
    first = send_prefix_and_body(pooled_engine.port, CLAIMED, SENT)    # takes more than the pool (one always may)
    wait_until(lambda: pool(pooled_engine)["memorypoolused"] == CLAIMED, message="the first request's memory")
    hostile = [send_prefix_and_body(pooled_engine.port, CLAIMED, SENT) for _ in range(HOSTILE)]
    wait_until(lambda: pool(pooled_engine)["memorypoolwaiting"] == HOSTILE, message="the others waiting")
    figures = pool(pooled_engine)
    assert (figures["memorypoolused"], figures["memorypoolavailable"]) == (CLAIMED, POOL - CLAIMED)

    client = RawClient(pooled_engine.port, timeout=30)
    request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
    request.with_header(correlation_id=1, client_id="waiting")
    client.send_bytes(request.encode(version=3, header=True, framed=True))
    wait_until(lambda: pool(pooled_engine)["memorypoolwaiting"] == HOSTILE + 1, message="the small request waiting")
    assert select.select([client.sock], [], [], 0)[0] == []     # not answered while the memory is taken

    for sock in [first, *hostile]:
        sock.close()
    answer = ApiVersionsResponse.decode(client.read_frame(), version=3, header=True)
    assert answer.error_code == 0
    wait_until(lambda: pool(pooled_engine)["memorypoolused"] == 0, message="the memory given back")
    assert pool(pooled_engine)["memorypoolwaiting"] == 0
    client.close()



def test_the_pool_lets_one_request_past_what_is_left_and_wakes_the_waiters_when_memory_is_back():
    async def scenario():
        capacity = {"bytes": 100}
        memory = RequestMemoryPool(lambda: capacity["bytes"])
        await memory.acquire(150)                       # more than the pool: taken, as anything was left
        assert (memory.used, memory.available) == (150, -50)
        waiters = [asyncio.create_task(memory.acquire(10)) for _ in range(2)]
        await asyncio.sleep(0)
        assert memory.waiting == 2 and not any(w.done() for w in waiters)
        memory.release(150)
        await asyncio.gather(*waiters)
        assert (memory.used, memory.waiting) == (20, 0)
        capacity["bytes"] = -1                          # unbounded, read on each request
        await memory.acquire(10**9)
        assert memory.available is None
    asyncio.run(scenario())
