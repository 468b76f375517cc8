"""Metadata for all topics: the engine encodes it once per metadata image and reuses it, so
these tests check that every change a client must see (a new topic, a deleted one, a broker
going down, a leader moving) shows up in the very next answer, and that each answer carries
its own request's correlation id in both header formats."""
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from tests.engine.cluster.helpers import create_topic, start_broker, stop_broker
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

FLEXIBLE, CLASSIC = 12, 8          # Metadata v9+ has a flexible (tagged) response header


def all_topics(client: RawClient, version: int = FLEXIBLE) -> MetadataResponse:
    return client.request(MetadataRequest(topics=None, allow_auto_topic_creation=False), version, MetadataResponse)


def partitions_of(response: MetadataResponse, topic: str) -> dict[int, tuple[int, list[int]]]:
    entry = next(t for t in response.topics if t.name == topic)
    return {p.partition_index: (p.leader_id, list(p.offline_replicas)) for p in entry.partitions}


def test_repeated_answers_keep_each_requests_correlation_id(engine_cluster, topic_name):
    create_topic(engine_cluster.bootstrap, topic_name, 2, 1)
    client = RawClient(engine_cluster.ports[0])
    try:
        for version in (FLEXIBLE, CLASSIC, FLEXIBLE, CLASSIC):
            before = client.correlation_id
            response = all_topics(client, version)
            assert response.header.correlation_id == before + 1
            assert topic_name in {t.name for t in response.topics}
    finally:
        client.close()


def test_a_created_and_a_deleted_topic_show_in_the_next_answer(engine_cluster, topic_name):
    from kafka.admin import KafkaAdminClient

    client = RawClient(engine_cluster.ports[1])
    admin = KafkaAdminClient(bootstrap_servers=engine_cluster.bootstrap)
    try:
        assert topic_name not in {t.name for t in all_topics(client).topics}
        create_topic(engine_cluster.bootstrap, topic_name, 3, 2)
        assert len(partitions_of(all_topics(client), topic_name)) == 3
        admin.delete_topics([topic_name])
        wait_until(lambda: topic_name not in {t.name for t in all_topics(client).topics}, timeout=10,
                   message="deleted topic still listed")
    finally:
        admin.close()
        client.close()


def test_a_stopped_broker_shows_as_offline_and_loses_its_leaderships(engine_factory, topic_name):
    engine = engine_factory(brokers=3)
    create_topic(engine.bootstrap, topic_name, 3, 3)
    client = RawClient(engine.ports[0])
    try:
        before = all_topics(client)
        assert {b.node_id for b in before.brokers} == {0, 1, 2}
        assert 2 in {leader for leader, _ in partitions_of(before, topic_name).values()}

        stop_broker(engine, 2)
        after = all_topics(client)
        assert {b.node_id for b in after.brokers} == {0, 1}
        assert all(leader != 2 and offline == [2] for leader, offline in partitions_of(after, topic_name).values())

        start_broker(engine, 2)
        wait_until(lambda: {b.node_id for b in all_topics(client).brokers} == {0, 1, 2}, timeout=15,
                   message="restarted broker not listed")
        assert all(offline == [] for _, offline in partitions_of(all_topics(client), topic_name).values())
    finally:
        client.close()


def test_every_broker_answers_the_same_and_sees_a_change_at_once(engine_cluster, topic_name):
    """The brokers share one cached answer per metadata image: a topic created through one
    broker shows in the next answer of each, and all answer alike."""
    clients = [RawClient(port) for port in engine_cluster.ports]
    try:
        for client in clients:
            all_topics(client)                       # each broker's answer cached before the change
        create_topic(engine_cluster.bootstrap, topic_name, 2, 1)
        answers = [all_topics(client, version) for client, version in zip(clients, (FLEXIBLE, CLASSIC, FLEXIBLE))]
        assert all(partitions_of(a, topic_name) == partitions_of(answers[0], topic_name) for a in answers)
        assert len({tuple(sorted(t.name for t in a.topics)) for a in answers}) == 1
        assert len(partitions_of(answers[0], topic_name)) == 2
    finally:
        for client in clients:
            client.close()
