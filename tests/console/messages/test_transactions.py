"""Transactions in search and tail, against the real engine with confluent-kafka's transactional
producer: search badges matches of committed, aborted and open transactions (selector, socket
and JSON API), read_committed search and tail leave aborted data out, and the read_uncommitted
tail updates a pending record once its marker arrives. The socket jobs run on worker threads,
so the rows must be committed: transactional databases."""
from __future__ import annotations

import asyncio
import base64
import csv
import io
import json
import uuid

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from django.urls import reverse

from console.messages import selectors
from console.messages.filters import FilterSpec
from console.messages.selectors import SearchQuery
from tests.console.conftest import make_topic
from tests.console.messages.conftest import create_topic, produce_confluent
from tests.console.messages.test_live import WAIT, communicator_for, events_until, search_over_socket
from tests.support.txn_clients import committed_transaction, open_transaction

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
HIT = FilterSpec(mode="substring", text="hit")


@pytest.fixture(scope="module")
def txn_topic(engine_cluster):
    """One partition: a plain record, a committed transaction of two records, an aborted one,
    and an open one (aborted when the module ends), each record holding "hit"."""
    run = uuid.uuid4().hex[:8]
    topic = create_topic(engine_cluster.bootstrap, f"msg-txn-search-{run}")
    produce_confluent(engine_cluster.bootstrap, topic, [{"partition": 0, "value": b"plain hit"}])
    committed_transaction(engine_cluster.bootstrap, f"c-{run}", [(topic, 0, b"c1 hit"), (topic, 0, b"c2 hit")])
    committed_transaction(engine_cluster.bootstrap, f"a-{run}", [(topic, 0, b"a1 hit")], commit=False)
    still_open = open_transaction(engine_cluster.bootstrap, f"o-{run}", [(topic, 0, b"o1 hit")])
    yield topic
    still_open.abort_transaction(60)


def searched(cluster, topic: str, **query) -> tuple[dict[str, str], dict]:
    """{value: transaction badge} of every match, and the final stats."""
    found, stats = {}, None
    for kind, item in selectors.message_search(cluster=cluster, topic=topic, query=SearchQuery(filter=HIT, **query),
                                               mask=False):
        if kind == "match":
            assert item[0].value.decode() not in found, "a match was sent twice"
            found[item[0].value.decode()] = item[1].transaction
        elif kind == "done":
            stats = item
    return found, stats


def test_search_badges_matches_by_their_transactions_outcome(cluster, txn_topic):
    found, stats = searched(cluster, txn_topic)
    assert found == {"plain hit": "", "c1 hit": "committed", "c2 hit": "committed", "a1 hit": "aborted",
                     "o1 hit": "open"}
    assert stats.done and stats.records_scanned == 5     # the two markers are not records


def test_a_match_whose_marker_is_past_the_searched_range_is_resolved_by_looking_ahead(cluster, txn_topic):
    found, _ = searched(cluster, txn_topic, end_offset=2)   # c1 and c2 end the range; their COMMIT is at 3
    assert found == {"plain hit": "", "c1 hit": "committed", "c2 hit": "committed"}


def test_read_committed_search_skips_aborted_and_open_transactions_and_counts_no_markers(cluster, txn_topic):
    found, stats = searched(cluster, txn_topic, isolation="read_committed")
    assert found == {"plain hit": "", "c1 hit": "", "c2 hit": ""}
    # Up to the LSO (the open transaction's first offset): four records, one of them aborted.
    assert stats.done and stats.records_scanned == 4 and stats.positions == {0: 6}


def test_the_socket_the_json_api_and_the_export_carry_each_matchs_outcome(cluster, users, txn_topic,
                                                                         viewer_client):
    events = search_over_socket(cluster, txn_topic, users["viewer"], {"mode": "substring", "text": "hit"})
    assert events[-1]["type"] == "done", events[-1]
    on_page = {m["value"]["text"]: m["transaction"] for e in events if e["type"] == "matches" for m in e["messages"]}
    expected = {"plain hit": "", "c1 hit": "committed", "c2 hit": "committed", "a1 hit": "aborted", "o1 hit": "open"}
    assert on_page == expected

    url = reverse("api:message_search", args=[cluster.pk, txn_topic])
    auth = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"viewer:viewer-password").decode()}
    lines = [json.loads(line) for line in b"".join(Client().get(url, {"text": "hit"}, **auth).streaming_content)
             .splitlines()]
    assert {m["message"]["value"]["text"]: m["message"]["transaction"] for m in lines if m["type"] == "match"} \
        == expected
    committed = Client().get(url, {"text": "hit", "isolation": "read_committed"}, **auth)
    assert sorted(json.loads(line)["message"]["value"]["text"] for line in b"".join(committed.streaming_content)
                  .splitlines() if json.loads(line)["type"] == "match") == ["c1 hit", "c2 hit", "plain hit"]
    bad = Client().get(url, {"text": "hit", "isolation": "serializable"}, **auth)
    assert bad.status_code == 400 and "Read with one of read_uncommitted, read_committed" in bad.json()["error"]
    export = viewer_client.get(reverse("messages:export", args=[cluster.pk, txn_topic]), {"text": "hit", "format": "csv"})
    rows = csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode()))
    assert {r["value"]: r["transaction"] for r in rows} == expected


def _tail(cluster, topic, user, command: dict, script):
    """Run `script(communicator, events)` against a started tail; returns every event received."""
    communicator = communicator_for(cluster, topic, user)
    events: list[dict] = []

    async def scenario():
        assert (await communicator.connect(timeout=WAIT))[0]
        await communicator.send_to(text_data=json.dumps({"action": "tail", **command}))
        events.extend(await events_until(communicator, lambda e: e["type"] in ("tailing", "error")))
        if events[-1]["type"] == "tailing":
            await script(communicator, events)
        await communicator.disconnect()
    async_to_sync(scenario)()
    return events


async def _until(communicator, events: list[dict], done) -> dict:
    events.extend(await events_until(communicator, done))
    return events[-1]


def _value_is(text):
    return lambda e: e["type"] == "record" and (e["message"]["value"]["text"] or "") == text


def test_tail_read_committed_shows_a_transaction_only_once_committed_and_never_an_aborted_one(
        cluster, users, engine_cluster):
    run = uuid.uuid4().hex[:8]
    # Both partitions on one broker: one Fetch reads both, so a later record of partition 1
    # proves the tail read partition 0 after the open transaction's records were written.
    topic = make_topic(cluster, f"msg-txn-tail-rc-{run}", assignments={0: [1], 1: [1]})
    bootstrap = engine_cluster.bootstrap

    async def script(communicator, events):
        committing = await asyncio.to_thread(open_transaction, bootstrap, f"rc-c-{run}", [(topic, 0, b"t-committed")])
        for sentinel in (b"sentinel-1", b"sentinel-2"):
            await asyncio.to_thread(produce_confluent, bootstrap, topic, [{"partition": 1, "value": sentinel}])
            await _until(communicator, events, _value_is(sentinel.decode()))
        await _until(communicator, events, lambda e: e["type"] == "tail_stats")   # that Fetch is fully sent
        assert not any(_value_is("t-committed")(e) for e in events), "shown before its commit"
        await asyncio.to_thread(committed_transaction, bootstrap, f"rc-a-{run}", [(topic, 0, b"t-aborted")],
                                commit=False)
        await asyncio.to_thread(committing.commit_transaction, 60)
        await asyncio.to_thread(produce_confluent, bootstrap, topic, [{"partition": 0, "value": b"after"}])
        await _until(communicator, events, _value_is("after"))

    events = _tail(cluster, topic, users["viewer"], {"isolation": "read_committed"}, script)
    assert events[0]["isolation"] == "read_committed"
    partition0 = [e["message"] for e in events if e["type"] == "record" and e["message"]["partition"] == 0]
    assert [m["value"]["text"] for m in partition0] == ["t-committed", "after"]      # no aborted record, no marker
    assert all(m["transaction"] == "" and m["control"] == "" for m in partition0)


def test_tail_read_uncommitted_shows_a_pending_record_then_its_commit(cluster, users, engine_cluster):
    run = uuid.uuid4().hex[:8]
    topic = create_topic(engine_cluster.bootstrap, f"msg-txn-tail-ru-{run}")
    bootstrap = engine_cluster.bootstrap

    async def script(communicator, events):
        producer = await asyncio.to_thread(open_transaction, bootstrap, f"ru-{run}", [(topic, 0, b"u1")])
        pending = await _until(communicator, events, _value_is("u1"))
        assert pending["message"]["transaction"] == "pending"
        await asyncio.to_thread(producer.commit_transaction, 60)
        await _until(communicator, events, lambda e: e["type"] == "outcome")
        await _until(communicator, events, lambda e: e["type"] == "record" and e["message"]["control"])

    events = _tail(cluster, topic, users["viewer"], {}, script)
    assert events[0]["isolation"] == "read_uncommitted"
    record = next(e["message"] for e in events if _value_is("u1")(e))
    outcome = next(e for e in events if e["type"] == "outcome")
    assert outcome == {"type": "outcome", "partition": 0, "offsets": [record["offset"]], "transaction": "committed"}
    marker = next(e["message"] for e in events if e["type"] == "record" and e["message"]["control"])
    assert marker["control"] == "COMMIT" and marker["producer_id"] == record["producer_id"] >= 0
    assert marker["offset"] > record["offset"]


def test_an_unknown_isolation_is_a_readable_error_on_the_tail(cluster, users, engine_cluster):
    topic = create_topic(engine_cluster.bootstrap, f"msg-txn-tail-bad-{uuid.uuid4().hex[:8]}")
    events = _tail(cluster, topic, users["viewer"], {"isolation": "read_dirty"}, None)
    assert events[-1] == {"type": "error", "message": "Read with one of read_uncommitted, read_committed."}
