"""Incremental fetch sessions (KIP-227) through the wire: a full fetch opens a session, an
incremental one names only what changed and is answered only what is new, forgotten partitions
leave it, a partition that answered records goes to the back of the session's order, Kafka's
session errors at the top level, a closed session is gone, a full cache opens none; and
kafka-python's consumer fetches incrementally and reads everything."""
from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer
from kafka.protocol.consumer import FetchRequest, FetchResponse

from tests.engine.protocol.test_fetch_topic_order import create_on_broker_0, produce_to
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

F = FetchRequest.FetchTopic
FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR = 70, 71, 106


def fetch(client: RawClient, topic: str, offsets: dict[int, int], *, session_id: int, epoch: int,
          forgotten: list[int] = (), max_bytes: int = 1 << 24, version: int = 12):
    """A Fetch of `offsets` ({partition: fetch offset}) in that order; the decoded response."""
    topics = [F(topic=topic, topic_id=uuid.UUID(int=0), partitions=[F.FetchPartition(
        partition=p, current_leader_epoch=-1, fetch_offset=o, log_start_offset=-1, last_fetched_epoch=-1,
        partition_max_bytes=1 << 20) for p, o in offsets.items()])] if offsets else []
    gone = [FetchRequest.ForgottenTopic(topic=topic, topic_id=uuid.UUID(int=0), partitions=list(forgotten))] \
        if forgotten else []
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=max_bytes, isolation_level=0,
                           session_id=session_id, session_epoch=epoch, topics=topics, forgotten_topics_data=gone,
                           rack_id="")
    return client.request(request, version, FetchResponse)


def answered(response) -> dict[int, int]:
    """{partition: records bytes} of the partitions the response lists."""
    return {p.partition_index: len(p.records or b"") for t in response.responses for p in t.partitions}


@pytest.fixture
def client(engine_cluster):
    raw = RawClient(engine_cluster.ports[0])
    yield raw
    raw.close()


def test_an_incremental_fetch_is_answered_only_what_is_new(client, topic_name):
    create_on_broker_0(client, topic_name, 2)
    for partition in (0, 1):
        produce_to(client, topic_name, partition, [b"a", b"b", b"c"])
    full = fetch(client, topic_name, {0: 0, 1: 0}, session_id=0, epoch=0)
    session = full.session_id
    assert session != 0 and full.error_code == 0
    assert all(size > 0 for size in answered(full).values()) and set(answered(full)) == {0, 1}
    # Both read to their end: nothing is new, so nothing is answered.
    nothing = fetch(client, topic_name, {0: 3, 1: 3}, session_id=session, epoch=1)
    assert (nothing.error_code, nothing.session_id, answered(nothing)) == (0, session, {})
    # Records on partition 1 only; the request names no partition: the session has their offsets.
    produce_to(client, topic_name, 1, [b"d", b"e"])
    new = fetch(client, topic_name, {}, session_id=session, epoch=2)
    assert list(answered(new)) == [1] and answered(new)[1] > 0
    # Forgotten, partition 1 is answered no more; partition 0 still is.
    fetch(client, topic_name, {1: 5}, session_id=session, epoch=3, forgotten=[1])
    produce_to(client, topic_name, 1, [b"f"])
    produce_to(client, topic_name, 0, [b"g"])
    assert list(answered(fetch(client, topic_name, {}, session_id=session, epoch=4))) == [0]


def test_session_errors_are_kafkas_and_a_closed_session_is_gone(client, topic_name):
    create_on_broker_0(client, topic_name, 1)
    produce_to(client, topic_name, 0, [b"x"])
    session = fetch(client, topic_name, {0: 0}, session_id=0, epoch=0).session_id
    assert fetch(client, topic_name, {}, session_id=session, epoch=1).error_code == 0
    stale = fetch(client, topic_name, {}, session_id=session, epoch=1)
    assert (stale.error_code, stale.responses) == (INVALID_FETCH_SESSION_EPOCH, [])
    assert fetch(client, topic_name, {}, session_id=session, epoch=2).error_code == 0     # the epoch still counts
    assert fetch(client, topic_name, {}, session_id=session ^ 1, epoch=1).error_code == FETCH_SESSION_ID_NOT_FOUND
    # A session opened with names goes on with topic ids: refused.
    assert fetch(client, topic_name, {}, session_id=session, epoch=3, version=13).error_code == \
        FETCH_SESSION_TOPIC_ID_ERROR
    closing = fetch(client, topic_name, {0: 0}, session_id=session, epoch=-1)
    assert (closing.error_code, closing.session_id, set(answered(closing))) == (0, 0, {0})
    assert fetch(client, topic_name, {}, session_id=session, epoch=4).error_code == FETCH_SESSION_ID_NOT_FOUND
    # A sessionless fetch stays as it was: every partition named, session id 0.
    plain = fetch(client, topic_name, {0: 1}, session_id=0, epoch=-1)
    assert (plain.session_id, set(answered(plain))) == (0, {0})


def test_a_partition_that_answered_records_goes_to_the_back(client, topic_name):
    """max_bytes 1: only the first partition in the session's order gets a batch (KIP-74). Partition
    0 holds three batches, 1 holds one: without the rotation, 0 would take every answer."""
    create_on_broker_0(client, topic_name, 2)
    for value in (b"p0-a", b"p0-b", b"p0-c"):
        produce_to(client, topic_name, 0, [value])
    produce_to(client, topic_name, 1, [b"p1-a"])
    full = fetch(client, topic_name, {0: 0, 1: 0}, session_id=0, epoch=0, max_bytes=1)
    session = full.session_id
    assert answered(full)[0] > 0 and answered(full)[1] == 0
    second = fetch(client, topic_name, {0: 1}, session_id=session, epoch=1, max_bytes=1)
    assert answered(second)[0] > 0          # 0 is still first in order: its second batch
    third = fetch(client, topic_name, {0: 2}, session_id=session, epoch=2, max_bytes=1)
    assert answered(third).get(1, 0) > 0 and answered(third).get(0, 0) == 0     # 0 went to the back


def test_a_full_cache_opens_no_session(engine_factory, topic_name):
    engine = engine_factory(configs={"max.incremental.fetch.session.cache.slots": "1"})
    first, second = RawClient(engine.ports[0]), RawClient(engine.ports[0])
    try:
        create_on_broker_0(first, topic_name, 1)
        produce_to(first, topic_name, 0, [b"x"])
        assert fetch(first, topic_name, {0: 0}, session_id=0, epoch=0).session_id != 0
        refused = fetch(second, topic_name, {0: 0}, session_id=0, epoch=0)
        assert (refused.error_code, refused.session_id, set(answered(refused))) == (0, 0, {0})
    finally:
        first.close()
        second.close()


def test_kafka_python_fetches_incrementally_and_reads_everything(engine_cluster, topic_name):
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=engine_cluster.bootstrap)
    try:
        admin.create_topics([NewTopic(topic_name, 6, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap)
    for i in range(300):
        producer.send(topic_name, b"%04d" % i, partition=i % 6)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(topic_name, bootstrap_servers=engine_cluster.bootstrap, group_id=f"g-{topic_name}",
                             auto_offset_reset="earliest", consumer_timeout_ms=1000)
    try:
        found: list[bytes] = []
        wait_until(lambda: found.extend(m.value for m in consumer) or len(found) >= 300, 90,
                   message="every record consumed")
        values = sorted(found)
        sessions = {node: (handler.next_metadata.session_id, handler.next_metadata.epoch)
                    for node, handler in consumer._fetcher._session_handlers.items()}
    finally:
        consumer.close()
    assert values == [b"%04d" % i for i in range(300)]
    assert sessions and all(session_id != 0 and epoch > 1 for session_id, epoch in sessions.values())


def _request(partitions: range, *, session_id: int, epoch: int) -> FetchRequest:
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1, isolation_level=0,
                        session_id=session_id, session_epoch=epoch, topics=[F(topic="t", partitions=[
                            F.FetchPartition(partition=p, current_leader_epoch=-1, fetch_offset=0,
                                             log_start_offset=-1, partition_max_bytes=1) for p in partitions])],
                        forgotten_topics_data=[], rack_id="")


def test_the_cache_bounds_its_partitions_and_evicts_only_idle_sessions(monkeypatch):
    """The cache alone (engine/protocol/fetch_sessions.py), on a manual clock: a session that would
    pass the cached partitions is not opened, or is closed when it grows past them; a full
    cache gives a new session the place of one idle for two minutes, and of no other."""
    import asyncio

    from engine import clock
    from engine.clock import ManualClock
    from engine.protocol import fetch_sessions

    monkeypatch.setattr(fetch_sessions, "FETCH_SESSION_PARTITIONS", 5)
    with clock.use(ManualClock()) as manual:
        cache = fetch_sessions.FetchSessionCache(lambda: 2)

        def context(partitions, session_id=0, epoch=0):
            return asyncio.run(cache.context(_request(partitions, session_id=session_id, epoch=epoch),
                                             by_topic_id=False))
        assert context(range(6)).session_id == 0                       # past the bound: no session
        first = context(range(3)).session_id
        assert first and cache.partitions_cached == 3
        grown = context(range(3, 6), session_id=first, epoch=1)        # 6 would be cached: closed
        assert grown.error == FETCH_SESSION_ID_NOT_FOUND and cache.partitions_cached == 0 and len(cache) == 0
        a, b = context(range(1)).session_id, context(range(1)).session_id
        assert a and b and context(range(1)).session_id == 0          # full, and nobody idle long enough
        manual.advance(fetch_sessions.EVICTION_MS + 1)                 # idle for more than two minutes
        assert context(range(1), session_id=b, epoch=1).error == 0    # b is used, a stays idle
        third = context(range(1)).session_id
        assert third and cache.evictions == 1
        assert context(range(1), session_id=a, epoch=1).error == FETCH_SESSION_ID_NOT_FOUND   # a was evicted
