"""OffsetCommit checks the committer before the group state, in Kafka's order
(ClassicGroup.validateOffsetCommit): UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID and ILLEGAL_GENERATION
come first, and only a valid member of the current generation hears REBALANCE_IN_PROGRESS while
the group completes a rebalance."""
from __future__ import annotations

import kafka.errors as Errors
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as CTopicPartition
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from tests.support.groups import GroupClient, assignment, create_topic, subscription

NONE = 0


@pytest.fixture
def completing_rebalance(group_cluster, group_id, topic_name):
    """A group at generation 2 waiting for its leader's SyncGroup (CompletingRebalance), whose
    members are the static member "instance-a" (the leader) and a dynamic member.

    Yields (leader client, member a, member b, old generation, new generation)."""
    create_topic(group_cluster.bootstrap, topic_name, 2)
    first, second = GroupClient(group_cluster, group_id), GroupClient(group_cluster, group_id)
    protocols = [("range", subscription([topic_name]))]
    try:
        joined = first.join_as_new_member(protocols=protocols, instance_id="instance-a")
        member_a, old_generation = joined.member_id, joined.generation_id
        assert first.sync(member_a, old_generation, {member_a: assignment({topic_name: [0, 1]})},
                          instance_id="instance-a").error_code == NONE
        member_b = second.join(protocols=protocols).member_id   # MEMBER_ID_REQUIRED
        join_b = second.begin("join", member_b, protocols=protocols)
        rejoined = first.join(member_a, protocols=protocols, instance_id="instance-a")
        assert rejoined.error_code == join_b().error_code == NONE
        assert rejoined.leader == member_a and rejoined.generation_id == old_generation + 1
        assert first.describe().group_state == "CompletingRebalance"
        yield first, member_a, member_b, old_generation, rejoined.generation_id
    finally:
        first.close()
        second.close()


def test_raw_commits_are_checked_member_first(completing_rebalance, topic_name):
    client, member_a, member_b, old_generation, generation = completing_rebalance
    tp = (topic_name, 0)

    def commit(**committer):
        return client.commit({tp: 7}, **committer)[tp]

    assert commit(member_id=member_a, generation_id=old_generation,
                  instance_id="instance-a") == Errors.IllegalGenerationError.errno
    assert commit(member_id=member_b, generation_id=old_generation) == Errors.IllegalGenerationError.errno
    assert commit(member_id="nobody", generation_id=generation) == Errors.UnknownMemberIdError.errno
    assert commit(member_id=member_b, generation_id=generation,
                  instance_id="instance-a") == Errors.FencedInstanceIdError.errno
    assert commit(member_id=member_a, generation_id=generation,
                  instance_id="instance-unknown") == Errors.UnknownMemberIdError.errno
    assert commit() == Errors.UnknownMemberIdError.errno   # no member, while the group is not empty
    # Only a valid member of the current generation is told to wait for the rebalance.
    assert commit(member_id=member_a, generation_id=generation,
                  instance_id="instance-a") == Errors.RebalanceInProgressError.errno
    assert commit(member_id=member_b, generation_id=generation) == Errors.RebalanceInProgressError.errno
    assert client.fetch([tp]) == (NONE, {tp: -1})   # nothing was stored


def test_kafka_python_standalone_commit_to_a_rebalancing_group_is_an_unknown_member(
        group_cluster, group_id, topic_name, completing_rebalance):
    consumer = KafkaConsumer(bootstrap_servers=group_cluster.bootstrap, group_id=group_id,
                             enable_auto_commit=False)
    tp = TopicPartition(topic_name, 0)
    try:
        consumer.assign([tp])
        with pytest.raises(Errors.CommitFailedError) as failed:
            consumer.commit({tp: OffsetAndMetadata(7, "", -1)})
        assert isinstance(failed.value.args[0], Errors.UnknownMemberIdError)
    finally:
        consumer.close(autocommit=False)


def test_confluent_kafka_standalone_commit_to_a_rebalancing_group_is_an_unknown_member(
        group_cluster, group_id, topic_name, completing_rebalance):
    consumer = Consumer({"bootstrap.servers": group_cluster.bootstrap, "group.id": group_id,
                         "enable.auto.commit": False})
    try:
        consumer.assign([CTopicPartition(topic_name, 0)])
        with pytest.raises(KafkaException) as failed:
            consumer.commit(offsets=[CTopicPartition(topic_name, 0, 7)], asynchronous=False)
        assert failed.value.args[0].code() == KafkaError.UNKNOWN_MEMBER_ID
    finally:
        consumer.close()
