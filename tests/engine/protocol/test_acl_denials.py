"""Producers and consumers logged in with SCRAM are refused with Kafka's error until an ACL
allows them, then served - with librdkafka (confluent-kafka), kafka-python and kafkajs; a
transactional producer needs its transactional id's ACL; an idempotent one IDEMPOTENT_WRITE
or WRITE on a topic (KIP-679). Each test grants to one user and takes it all back after."""
import uuid

import kafka.errors as Errors
import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.protocol.consumer import OffsetCommitRequest, OffsetCommitResponse
from kafka.protocol.producer.transaction import TxnOffsetCommitRequest, TxnOffsetCommitResponse

from engine.protocol.specs import (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
                                   ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse)
from tests.engine.protocol.test_acls import run_kafkajs
from tests.support.acls import confluent_login, connect_as, grant, kafka_python_login, revoke_all
from tests.support.share import coordinator_port, topic_id_of


@pytest.fixture
def topic(acl_admin):
    """Two replicas: an acks=all answer also proves the brokers' own replica fetches pass the authorizer."""
    name = f"denied-{uuid.uuid4().hex[:8]}"
    acl_admin.create_topics([NewTopic(name, 1, 2)])
    return name


@pytest.fixture
def user(acl_admin):
    """carol, with her ACLs taken back after the test."""
    yield "carol"
    revoke_all(acl_admin, "User:carol")


def kafka_python_send(bootstrap: str, user: str, topic: str, **options):
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", max_block_ms=20000,
                             **kafka_python_login(user), **options)
    try:
        return producer.send(topic, b"value").get(timeout=30)
    finally:
        producer.close(timeout=5)


def test_kafka_python_producer_is_refused_then_allowed(acl_engine, acl_admin, topic, user):
    with pytest.raises(Errors.TopicAuthorizationFailedError):
        kafka_python_send(acl_engine.bootstrap, user, topic, enable_idempotence=False)
    # The refusal (kafka-python asks for the topic's metadata first) is in the engine's log as
    # Kafka's authorizer logger words it.
    assert f"INFO engine.authorizer: Principal = User:{user} is Denied operation = DESCRIBE from host = 127.0.0.1 " \
           f"on resource = Topic:LITERAL:{topic} for request = Metadata with resourceRefCount = 1 " \
           f"based on rule DefaultDeny" in \
           acl_engine.log_path.read_text()
    grant(acl_admin, f"User:{user}", "WRITE", "TOPIC", topic)
    assert kafka_python_send(acl_engine.bootstrap, user, topic, enable_idempotence=False).offset == 0


def test_an_idempotent_producer_needs_idempotent_write_or_write_on_a_topic(acl_engine, acl_admin, topic, user):
    with pytest.raises((Errors.ClusterAuthorizationFailedError, Errors.TopicAuthorizationFailedError)):
        kafka_python_send(acl_engine.bootstrap, user, topic, enable_idempotence=True)
    grant(acl_admin, f"User:{user}", "WRITE", "TOPIC", topic[:8], pattern="PREFIXED")   # WRITE on some topics
    assert kafka_python_send(acl_engine.bootstrap, user, topic, enable_idempotence=True).offset == 0


def kafka_python_consume(bootstrap: str, user: str, topic: str, group: str) -> list[bytes]:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             consumer_timeout_ms=20000, **kafka_python_login(user))
    try:
        for message in consumer:
            return [message.value]
        return []
    finally:
        consumer.close()


def kafka_python_topics(bootstrap: str, user: str) -> set[str]:
    """The topics a consumer sees in Metadata."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, **kafka_python_login(user))
    try:
        return consumer.topics()
    finally:
        consumer.close()


def test_kafka_python_consumer_needs_the_topic_and_the_group(acl_engine, acl_admin, topic, user):
    """kafka-python's consumer does not raise for a topic Metadata refuses: it just does not see it."""
    kafka_python_send(acl_engine.bootstrap, "admin", topic)
    group = f"g-{topic}"
    assert topic not in kafka_python_topics(acl_engine.bootstrap, user)
    grant(acl_admin, f"User:{user}", "READ", "TOPIC", topic)
    assert topic in kafka_python_topics(acl_engine.bootstrap, user)
    with pytest.raises(Errors.GroupAuthorizationFailedError):
        kafka_python_consume(acl_engine.bootstrap, user, topic, group)
    grant(acl_admin, f"User:{user}", "READ", "GROUP", group)
    assert kafka_python_consume(acl_engine.bootstrap, user, topic, group) == [b"value"]


def confluent_send(bootstrap: str, user: str, topic: str) -> KafkaError | None:
    outcome = []
    producer = Producer({**confluent_login(bootstrap, user), "acks": "all", "enable.idempotence": False,
                         "message.timeout.ms": 20000})
    producer.produce(topic, b"librdkafka", on_delivery=lambda error, message: outcome.append(error))
    producer.flush(30)
    return outcome[0]


def confluent_consume(bootstrap: str, user: str, topic: str, group: str):
    """The first record's value, or the first error code the consumer reports."""
    consumer = Consumer({**confluent_login(bootstrap, user), "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        for _ in range(300):
            message = consumer.poll(0.1)
            if message is None:
                continue
            if message.error() is not None:
                if message.error().code() in (KafkaError.TOPIC_AUTHORIZATION_FAILED,
                                              KafkaError.GROUP_AUTHORIZATION_FAILED):
                    return message.error().code()
                continue
            return message.value()
        return None
    finally:
        consumer.close()


def test_librdkafka_producer_and_consumer_are_refused_then_allowed(acl_engine, acl_admin, topic, user):
    assert confluent_send(acl_engine.bootstrap, user, topic).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(acl_admin, f"User:{user}", "WRITE", "TOPIC", topic)
    assert confluent_send(acl_engine.bootstrap, user, topic) is None
    group = f"g-{topic}"
    assert confluent_consume(acl_engine.bootstrap, user, topic, group) == KafkaError.GROUP_AUTHORIZATION_FAILED
    grant(acl_admin, f"User:{user}", "READ", "GROUP", group)
    assert confluent_consume(acl_engine.bootstrap, user, topic, group) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(acl_admin, f"User:{user}", "READ", "TOPIC", topic)
    assert confluent_consume(acl_engine.bootstrap, user, topic, group) == b"librdkafka"


def test_kafkajs_producer_and_consumer_are_refused_then_allowed(acl_engine, acl_admin, topic, user):
    bootstrap = acl_engine.bootstrap
    assert run_kafkajs(bootstrap, user, "produce", topic, "js") == {"error": "TOPIC_AUTHORIZATION_FAILED"}
    grant(acl_admin, f"User:{user}", "WRITE", "TOPIC", topic)
    assert run_kafkajs(bootstrap, user, "produce", topic, "js") == {"ok": True}
    group = f"g-{topic}"
    # kafkajs reports FindCoordinator's GROUP_AUTHORIZATION_FAILED as "no coordinator found" (it tries
    # every broker and keeps no cause); the denial is still the group's: the topic's comes next.
    assert run_kafkajs(bootstrap, user, "consume", topic, group) == {"error": "KafkaJSGroupCoordinatorNotFound"}
    grant(acl_admin, f"User:{user}", "READ", "GROUP", group)
    assert run_kafkajs(bootstrap, user, "consume", topic, group)["error"] == "TOPIC_AUTHORIZATION_FAILED"
    grant(acl_admin, f"User:{user}", "READ", "TOPIC", topic)
    assert run_kafkajs(bootstrap, user, "consume", topic, group) == {"values": ["js"]}


def test_a_transactional_producer_needs_its_transactional_id(acl_engine, acl_admin, topic, user):
    transactional_id = f"tx-{topic}"
    grant(acl_admin, f"User:{user}", "WRITE", "TOPIC", topic)
    producer = Producer({**confluent_login(acl_engine.bootstrap, user), "transactional.id": transactional_id})
    with pytest.raises(Exception) as refused:
        producer.init_transactions(30)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    # kafkajs hides FindCoordinator's TRANSACTIONAL_ID_AUTHORIZATION_FAILED as "no coordinator found".
    assert run_kafkajs(acl_engine.bootstrap, user, "transaction", topic, transactional_id) == \
        {"error": "KafkaJSGroupCoordinatorNotFound"}
    grant(acl_admin, f"User:{user}", "WRITE", "TRANSACTIONAL_ID", transactional_id)
    producer = Producer({**confluent_login(acl_engine.bootstrap, user), "transactional.id": transactional_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed")
    producer.commit_transaction(30)
    assert run_kafkajs(acl_engine.bootstrap, user, "transaction", topic, transactional_id) == {"ok": True}


def consumer_heartbeat(client, group: str, *, names=None, regex=None):
    return client.request(ConsumerGroupHeartbeatRequest(
        group_id=group, member_id=uuid.uuid4().hex[:22], member_epoch=0, instance_id=None, rack_id=None,
        rebalance_timeout_ms=30000, subscribed_topic_names=names, subscribed_topic_regex=regex, server_assignor=None,
        topic_partitions=[]), 1, ConsumerGroupHeartbeatResponse)


def assigned_ids(response) -> set:
    return {t.topic_id for t in response.assignment.topic_partitions}


def test_a_consumer_group_member_sees_only_the_topics_it_may_describe(acl_engine, acl_admin, topic, user):
    """ConsumerGroupHeartbeat refuses a subscription naming a topic the member may not describe,
    and its regex matches only those it may; ConsumerGroupDescribe needs DESCRIBE on the
    topics of the group's assignments (KafkaApis, GroupMetadataManager)."""
    hidden = f"{topic}-hidden"
    acl_admin.create_topics([NewTopic(hidden, 1, 2)])
    by_name, by_regex = f"g-{topic}", f"r-{topic}"
    grant(acl_admin, f"User:{user}", "READ", "GROUP", by_name)
    grant(acl_admin, f"User:{user}", "READ", "GROUP", by_regex)
    grant(acl_admin, f"User:{user}", "DESCRIBE", "TOPIC", topic)
    connect = connect_as(user)
    client = connect(coordinator_port(acl_engine.ports[0], by_name, connect=connect))
    try:
        refused = consumer_heartbeat(client, by_name, names=[topic, hidden])
        assert (refused.error_code, refused.error_message) == (
            Errors.TopicAuthorizationFailedError.errno, f"Not authorized to describe the subscribed topics: {hidden}")
        assert assigned_ids(consumer_heartbeat(client, by_name, names=[topic])) == {topic_id_of(
            acl_engine.ports[0], topic, connect)}
    finally:
        client.close()
    client = connect(coordinator_port(acl_engine.ports[0], by_regex, connect=connect))
    try:
        assert assigned_ids(consumer_heartbeat(client, by_regex, regex=f"{topic}.*")) == {topic_id_of(
            acl_engine.ports[0], topic, connect)}
    finally:
        client.close()
    grant(acl_admin, "User:bob", "DESCRIBE", "GROUP", by_name)
    bob = connect_as("bob")(coordinator_port(acl_engine.ports[0], by_name, connect=connect))
    try:
        refused = consumer_describe(bob, by_name)
        assert (refused.error_code, refused.members) == (Errors.TopicAuthorizationFailedError.errno, [])
        assert refused.error_message == "The described group uses topics that the client is not authorized to " \
                                        "describe."
        grant(acl_admin, "User:bob", "DESCRIBE", "TOPIC", topic)
        described = consumer_describe(bob, by_name)
        assert described.error_code == 0 and described.members[0].subscribed_topic_names == [topic]
    finally:
        bob.close()
        revoke_all(acl_admin, "User:bob")


def consumer_describe(client, group: str):
    return client.request(ConsumerGroupDescribeRequest(group_ids=[group], include_authorized_operations=False), 1,
                          ConsumerGroupDescribeResponse).groups[0]


def offset_commit(topic: str, group: str):
    R = OffsetCommitRequest
    return R(group_id=group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
             retention_time_ms=-1, topics=[R.OffsetCommitRequestTopic(name=topic, partitions=[
                 R.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                     partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata="")])]), \
        8, OffsetCommitResponse


def txn_offset_commit(topic: str, group: str):
    R = TxnOffsetCommitRequest
    return R(transactional_id=f"tx-{group}", group_id=group, producer_id=1, producer_epoch=0, generation_id=-1,
             member_id="", group_instance_id=None, topics=[R.TxnOffsetCommitRequestTopic(name=topic, partitions=[
                 R.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
                     partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata="")])]), \
        3, TxnOffsetCommitResponse


@pytest.mark.parametrize("commit, refusal", [(offset_commit, Errors.GroupAuthorizationFailedError),
                                             (txn_offset_commit, Errors.TransactionalIdAuthorizationFailedError)])
def test_a_refused_offset_commit_answers_its_refusal_on_every_partition(acl_engine, topic, user, commit, refusal):
    """As KafkaApis: the group's (or transactional id's) refusal comes first and the topics are not
    asked about, so a partition of a topic the principal may not read says the same."""
    connect = connect_as(user)
    client = connect(acl_engine.ports[0])
    try:
        request, version, response_class = commit(topic, f"g-{topic}")
        response = client.request(request, version, response_class)
        assert [p.error_code for t in response.topics for p in t.partitions] == [refusal.errno]
    finally:
        client.close()
