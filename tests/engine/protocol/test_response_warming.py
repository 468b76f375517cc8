"""The all-topics Metadata answer is rebuilt for a new metadata image right after the change,
but only while someone polls it: the console's next page then finds it ready. In-process, so
the test can count builds; waits are bounded polls, never timing assertions."""
import asyncio

from kafka.protocol.api_header import RequestHeader
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from engine.protocol.apis.k03_metadata import handle_metadata
from engine.protocol.dispatch import RequestContext
from engine.runtime import Engine
from tests.support.engine_process import free_port_range

VERSION = 12


async def _all_topics(engine: Engine, broker: int = 0):
    header = RequestHeader(request_api_key=3, request_api_version=VERSION, correlation_id=1, client_id="test")
    ctx = RequestContext(broker=engine.brokers[broker], header=header, api_version=VERSION, client_host="127.0.0.1")
    body = await handle_metadata(ctx, MetadataRequest(topics=None, allow_auto_topic_creation=False))
    return {t.name for t in MetadataResponse.decode(body.body, version=VERSION).topics}


async def _until(condition, timeout: float = 20.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def test_a_polled_answer_is_ready_for_the_next_image_and_an_unpolled_one_is_not_built(tmp_path):
    async def scenario():
        engine = Engine(tmp_path / "data", brokers=3, port=free_port_range(4), admin=False)
        await engine.start()
        try:
            cache = engine.response_cache
            engine.controller.create_topic("before-any-poll", 1, 1)
            await asyncio.sleep(0.5)
            assert cache.builds == 0                      # nobody polled: nothing built in advance

            assert "before-any-poll" in await _all_topics(engine, 0)
            assert await _all_topics(engine, 2) and cache.builds == 1   # brokers share one answer

            engine.controller.create_topic("after-a-poll", 2, 1)
            assert await _until(lambda: cache.builds == 2), "the new image's answer was not built"
            assert "after-a-poll" in await _all_topics(engine, 1)
            assert cache.builds == 2                      # the request found it ready
        finally:
            await engine.stop()

    asyncio.run(scenario())
