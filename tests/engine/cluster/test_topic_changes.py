"""A CreateTopics batch validated over several turns of the event loop: what another request
did meanwhile is checked once more before the one commit. A DeleteTopics batch likewise: its
topics are removed in one commit the brokers hear of at once, and a topic another request
deleted meanwhile is withdrawn."""
import kafka.errors as Errors
import pytest

from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic

from engine.cluster.controller import Controller
from engine.config import BrokerConfig
from engine.errors import ApiError
from tests.engine.cluster.helpers import partition_state, start_broker, stop_broker, wait_until
from tests.support.partition_io import read_values, send_values


def controller(tmp_path, **configs) -> Controller:
    made = Controller(tmp_path, BrokerConfig(static=configs))
    made.register_broker(0, "127.0.0.1", 9092)
    made.unfence_broker(0)
    return made


def test_a_name_taken_meanwhile_is_withdrawn_from_the_batch_not_created_twice(tmp_path):
    cluster = controller(tmp_path)
    batch = cluster.new_topics()
    batch.add("orders", 1, 1)
    batch.add("payments", 1, 1)
    cluster.create_topic("orders", 3, 1)               # another request, between two slices
    withdrawn = batch.withdraw_taken()
    assert {name: exc.code for name, exc in withdrawn.items()} == {"orders": Errors.TopicAlreadyExistsError.errno}
    batch.commit()
    assert len(cluster.image.topics["orders"].partitions) == 3      # the other request's topic, untouched
    assert "payments" in cluster.image.topics


def test_a_batch_that_would_now_pass_the_partition_limit_is_withdrawn_whole(tmp_path):
    cluster = controller(tmp_path, **{"max.partitions": "10"})
    batch = cluster.new_topics()
    batch.add("a", 4, 1)
    batch.add("b", 4, 1)
    cluster.create_topic("c", 5, 1)
    withdrawn = batch.withdraw_taken()
    assert {exc.code for exc in withdrawn.values()} == {Errors.PolicyViolationError.errno} and set(withdrawn) == {"a", "b"}
    assert "over its limit of 10 (max.partitions)" in withdrawn["a"].message
    batch.commit()
    assert set(cluster.image.topics) == {"c"}


def test_a_deletion_batch_is_one_commit_the_brokers_hear_of_at_once_and_the_journal_keeps(tmp_path):
    cluster = controller(tmp_path)
    for i in range(300):
        cluster.create_topic(f"t{i}", 2 if i % 10 == 0 else 1, 1)
    heard = []
    cluster.add_listener(lambda changed, deleted, epoch: heard.append(sorted(t.name for t in deleted)))
    batch = cluster.topic_deletions()
    for i in range(300):
        batch.add(f"t{i}")
    assert batch.commit_next() == {} and not batch.pending()
    assert heard == [sorted(f"t{i}" for i in range(300))]
    assert cluster.image.topics == {} and cluster.image.topics_by_id == {}
    assert Controller(tmp_path, BrokerConfig()).image.topics == {}     # as the journal replays it


def test_a_topic_named_twice_is_unknown_the_second_time(tmp_path):
    cluster = controller(tmp_path)
    topic_id = cluster.create_topic("orders", 1, 1).topic_id
    batch = cluster.topic_deletions()
    batch.add("orders")
    assert batch.topic("orders") is None and batch.topic_by_id(topic_id) is None
    with pytest.raises(ApiError) as refused:
        batch.add("orders")
    assert refused.value.code == Errors.UnknownTopicOrPartitionError.errno


def test_a_topic_deleted_or_re_created_meanwhile_is_withdrawn_from_the_deletion(tmp_path):
    cluster = controller(tmp_path)
    for name in ("a", "b", "c"):
        cluster.create_topic(name, 1, 1)
    batch = cluster.topic_deletions()
    old = {name: batch.add(name).topic_id for name in ("a", "b", "c")}
    cluster.delete_topic("a")                          # another request, between two slices
    cluster.delete_topic("b")
    cluster.create_topic("b", 3, 1)
    failed = batch.commit_next()
    assert {topic_id: exc.code for topic_id, exc in failed.items()} == {
        old["a"]: Errors.UnknownTopicOrPartitionError.errno, old["b"]: Errors.UnknownTopicOrPartitionError.errno}
    assert set(cluster.image.topics) == {"b"} and len(cluster.image.topics["b"].partitions) == 3


def test_new_partitions_are_led_by_live_brokers_while_one_is_stopped(engine_factory):
    """As KRaft: automatic placement leaves a stopped (fenced) broker out, and a manual
    assignment naming one starts with the live replicas as its ISR and leader; one naming
    only stopped brokers is refused. Before, such partitions were born leaderless."""
    engine = engine_factory(brokers=3, configs={"auto.leader.rebalance.enable": "false"})
    stop_broker(engine, 2)
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, request_timeout_ms=15000)
    try:
        assert admin.create_topics([NewTopic("spread", 6, 2)], raise_errors=False)["topics"][0]["error_code"] == 0
        assert all(leader in (0, 1) and 2 not in replicas
                   for leader, replicas, _ in partition_state(engine.bootstrap, "spread").values())
        three = admin.create_topics([NewTopic("three", 1, 3)], raise_errors=False)["topics"][0]
        assert (three["error_code"], three["error_message"]) == (
            Errors.InvalidReplicationFactorError.errno, "Unable to replicate the partition 3 time(s): The target "
            "replication factor of 3 cannot be reached because only 2 broker(s) are registered.")
        admin.create_topics([NewTopic("manual", -1, -1, replica_assignments={0: [2, 0]})])
        assert partition_state(engine.bootstrap, "manual")[0] == (0, [2, 0], [0])
        send_values(engine.bootstrap, "manual", [b"acked"], acks="all")
        only = admin.create_topics([NewTopic("stopped-only", -1, -1, replica_assignments={0: [2]})],
                                   raise_errors=False)["topics"][0]
        message = "All brokers specified in the manual partition assignment for partition 0 are fenced or in " \
                  "controlled shutdown."
        assert (only["error_code"], only["error_message"]) == (Errors.InvalidReplicationFactorError.errno, message)
        grown = admin.create_partitions({"manual": NewPartitions(2, [[2, 1]])}, raise_errors=False)
        assert grown.results[0].error_code == 0
        assert partition_state(engine.bootstrap, "manual")[1] == (1, [2, 1], [1])
        admin.create_topics([NewTopic("single", -1, -1, replica_assignments={0: [0]})])
        refused = admin.create_partitions({"single": NewPartitions(2, [[2]])}, raise_errors=False).results[0]
        assert (refused.error_code, refused.error_message) == (Errors.InvalidReplicationAssignmentError.errno,
                                                               message.replace("partition 0", "partition 1"))
        start_broker(engine, 2)
        wait_until(lambda: sorted(partition_state(engine.bootstrap, "manual")[0][2]) == [0, 2],
                   message="broker 2 to catch up and join the ISR")
        assert read_values(engine.bootstrap, "manual", 1) == [b"acked"]
    finally:
        admin.close()
