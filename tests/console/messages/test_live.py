"""The messages socket through the real ASGI stack: streamed search with stats and stop, live
tail with a filter, pause and resume, and masking for viewers. The jobs run on worker threads,
so the rows must be committed: transactional databases."""
from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client

from console.asgi import application
from console.messages.models import MaskingRule
from tests.console.messages.conftest import create_topic, produce_confluent

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
WAIT = 60   # seconds: a bound for a hung engine or socket, not a performance threshold


def communicator_for(cluster, topic: str, user=None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if user is not None:
        client = Client()
        client.force_login(user)
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return WebsocketCommunicator(application, f"/ws/clusters/{cluster.pk}/topics/{topic}/messages/", headers=headers)


async def events_until(communicator, done, limit: int = 100_000) -> list[dict]:
    events = []
    while len(events) < limit:
        event = json.loads(await communicator.receive_from(timeout=WAIT))
        events.append(event)
        if done(event):
            return events
    raise AssertionError("too many events")


@pytest.fixture
def filled_topic(engine_cluster, unique_topic):
    topic = create_topic(engine_cluster.bootstrap, unique_topic(), partitions=2)
    produce_confluent(engine_cluster.bootstrap, topic, [
        {"partition": i % 2, "key": b"k%d" % i,
         "value": b'{"i": %d, "secret": "s%d", "hit": %s}' % (i, i, b"true" if i % 1000 == 5 else b"false")}
        for i in range(20_000)])
    return topic


def search_over_socket(cluster, topic: str, user, command: dict) -> list[dict]:
    """Every event of one search, up to its "done" (or "error")."""
    communicator = communicator_for(cluster, topic, user)

    async def scenario():
        assert (await communicator.connect(timeout=WAIT))[0]
        await communicator.send_to(text_data=json.dumps({"action": "search", **command}))
        events = await events_until(communicator, lambda e: e["type"] in ("done", "error"))
        await communicator.disconnect()
        return events
    return async_to_sync(scenario)()


def test_search_streams_matches_and_stats_that_add_up(cluster, users, filled_topic):
    events = search_over_socket(cluster, filled_topic, users["viewer"],
                                {"json_path": "hit", "json_op": "==", "json_value": "true", "partition": "all"})
    assert events[-1]["type"] == "done", events[-1]
    found = sorted(m["offset"] * 2 + m["partition"] for e in events if e["type"] == "matches" for m in e["messages"])
    assert found == list(range(5, 20_000, 1000))
    stats = events[-1]["stats"]
    assert stats["done"] and stats["matches"] == 20 and stats["records_scanned"] == 20_000
    assert stats["positions"] == stats["ends"] == {"0": 10_000, "1": 10_000}


def test_stop_ends_a_search_and_a_bad_regex_is_an_error(cluster, users, filled_topic):
    communicator = communicator_for(cluster, filled_topic, users["operator"])

    async def scenario():
        assert (await communicator.connect(timeout=WAIT))[0]
        await communicator.send_to(text_data=json.dumps({"action": "search", "mode": "regex", "text": "(["}))
        bad = await events_until(communicator, lambda e: e["type"] in ("done", "error"))
        await communicator.send_to(text_data=json.dumps({"action": "search", "mode": "substring", "text": "nowhere",
                                                         "max_seconds": "600"}))
        await communicator.send_to(text_data=json.dumps({"action": "stop"}))
        stopped = await events_until(communicator, lambda e: e["type"] in ("done", "error"))
        await communicator.disconnect()
        return bad, stopped
    bad, stopped = async_to_sync(scenario)()
    assert bad[-1]["type"] == "error" and "Bad regular expression" in bad[-1]["message"]
    stats = stopped[-1]["stats"]
    assert stopped[-1]["type"] == "done"
    assert stats["stopped_by"] == "stop" or stats["done"]   # a fast machine may finish before the stop arrives
    assert stats["records_scanned"] == sum(stats["positions"].values())


def test_tail_shows_new_matching_records_masked_for_a_viewer(cluster, users, engine_cluster, filled_topic):
    MaskingRule.objects.create(cluster=cluster, topic=filled_topic, kind="json_field", pattern="secret")
    communicator = communicator_for(cluster, filled_topic, users["viewer"])

    async def scenario():
        assert (await communicator.connect(timeout=WAIT))[0]
        await communicator.send_to(text_data=json.dumps({"action": "tail", "mode": "substring", "text": "fresh"}))
        await events_until(communicator, lambda e: e["type"] == "tailing")
        # Produced after the tail started: only the "fresh" one may show.
        await asyncio.to_thread(produce_confluent, engine_cluster.bootstrap, filled_topic, [
            {"partition": 1, "value": b"stale"}, {"partition": 0, "value": b'{"secret": "s-new", "note": "fresh"}'}])
        events = await events_until(communicator, lambda e: e["type"] == "record")
        await communicator.send_to(text_data=json.dumps({"action": "pause"}))
        await communicator.disconnect()
        return events
    events = async_to_sync(scenario)()
    record = events[-1]["message"]
    assert "fresh" in record["value"]["text"] and "s-new" not in record["value"]["text"] and record["masked"]
    assert record["offset"] == 10_000 and record["partition"] == 0


def test_anonymous_sockets_are_refused(cluster, filled_topic):
    communicator = communicator_for(cluster, filled_topic)

    async def scenario():
        connected, _ = await communicator.connect(timeout=WAIT)
        return connected
    assert async_to_sync(scenario)() is False
