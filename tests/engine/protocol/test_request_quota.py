"""Request quotas (KIP-124, engine/protocol/request_quota.py): a client over its
`request_percentage` of the event loop's time is answered with throttle_time_ms and its
connection muted; a client without the quota, ApiVersions, and the time a handler spends
waiting are not counted."""
from __future__ import annotations

import asyncio

import pytest
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from engine.protocol.request_quota import Timed
from tests.engine.protocol.test_client_quotas import alter
from tests.support.raw_client import RawClient


@pytest.fixture
def engine(engine_factory):
    return engine_factory(brokers=1, admin=False)


def metadata(client: RawClient):
    return client.request(MetadataRequest(topics=None, allow_auto_topic_creation=False), 12, MetadataResponse)


def fetch(client: RawClient):
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[F(topic="none-here", partitions=[
                               F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=0,
                                                last_fetched_epoch=-1, log_start_offset=-1,
                                                partition_max_bytes=1 << 20)])],
                           forgotten_topics_data=[], rack_id="")
    return client.request(request, 12, FetchResponse)


def test_a_client_over_its_request_percentage_is_throttled_and_others_are_not(engine):
    admin = RawClient(engine.ports[0])
    try:
        # A thousandth of a percent of one thread: 0.1 ms of the loop's time over the 10 s window.
        assert alter(admin, [({"client-id": "busy"}, {"request_percentage": 0.001})]) == [(0, None)]
    finally:
        admin.close()
    busy, idle = RawClient(engine.ports[0], client_id="busy"), RawClient(engine.ports[0], client_id="idle")
    try:
        throttles = []
        while len(throttles) < 50 and not any(throttles):   # each throttled answer mutes the connection
            throttles.append(metadata(busy).throttle_time_ms)                # answered from a cached body
        assert 0 < max(throttles) <= 1000      # capped at one quota window (quota.window.size.seconds)
        assert fetch(busy).throttle_time_ms > 0                            # a zero-copy answer
        assert all(metadata(idle).throttle_time_ms == 0 for _ in range(20))
        versions = busy.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3,
                                ApiVersionsResponse)
        assert versions.throttle_time_ms == 0  # never counted: a client must always be able to connect
    finally:
        busy.close()
        idle.close()


def test_only_the_handlers_own_steps_are_timed_not_its_waits():
    async def handler():
        await asyncio.sleep(0.2)               # a wait (replication, a long poll): not the loop's time
        return "answer"

    async def scenario():
        timed = Timed(handler())
        assert await timed == "answer"
        return timed.spent
    assert asyncio.run(scenario()) < 0.05
