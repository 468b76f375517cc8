"""Topic administration with real admin clients: CreateTopics, DeleteTopics and
CreatePartitions, checked against Metadata, the data path and the brokers' log dirs.
DeleteRecords, DescribeCluster and auto topic creation are in test_admin_cluster.py."""
import uuid
from collections import Counter

import kafka.errors as Errors
import pytest
from confluent_kafka.admin import NewPartitions

from tests.engine.protocol.admin_support import (consume_from_beginning, create_topic,
                                                 describe_topic, offsets, partition_dirs, produce, wait_until)

ALL_BROKERS = {0, 1, 2}


# --- CreateTopics -------------------------------------------------------------------------

def test_create_topic_honours_partitions_and_spreads_replicas(admin, topic_name):
    result = create_topic(admin, topic_name, num_partitions=6, replication_factor=2)
    assert (result["error_code"], result["num_partitions"], result["replication_factor"]) == (0, 6, 2)
    assert result["topic_id"] is not None

    topic = describe_topic(admin, topic_name)
    assert topic["error_code"] == 0 and topic["topic_id"] == result["topic_id"]
    partitions = topic["partitions"]
    assert [p["partition_index"] for p in partitions] == list(range(6))
    for p in partitions:
        assert len(set(p["replica_nodes"])) == 2 and set(p["replica_nodes"]) <= ALL_BROKERS
        assert p["leader_id"] == p["replica_nodes"][0]  # the preferred replica leads
        assert p["leader_id"] in p["isr_nodes"]
    # Kafka's spread: leaders round-robin, and followers shift every round.
    assert Counter(p["leader_id"] for p in partitions) == {0: 2, 1: 2, 2: 2}
    assert Counter(b for p in partitions for b in p["replica_nodes"]) == {0: 4, 1: 4, 2: 4}


def test_create_topic_with_replication_factor_3_uses_every_broker(admin, engine_cluster, topic_name):
    assert create_topic(admin, topic_name, num_partitions=3, replication_factor=3)["error_code"] == 0
    partitions = describe_topic(admin, topic_name)["partitions"]
    assert all(sorted(p["replica_nodes"]) == [0, 1, 2] for p in partitions)
    assert {p["leader_id"] for p in partitions} == ALL_BROKERS
    # Each leader holds its partition's log.
    for p in partitions:
        assert (engine_cluster.data_dir / f"broker-{p['leader_id']}" / f"{topic_name}-{p['partition_index']}").is_dir()


def test_create_topic_with_manual_assignment(admin, topic_name):
    assignment = {0: [2, 0], 1: [0, 1], 2: [1, 2], 3: [2, 1]}
    result = create_topic(admin, topic_name, assignments=assignment)
    assert (result["error_code"], result["num_partitions"], result["replication_factor"]) == (0, 4, 2)
    partitions = describe_topic(admin, topic_name)["partitions"]
    assert {p["partition_index"]: p["replica_nodes"] for p in partitions} == assignment
    assert {p["partition_index"]: p["leader_id"] for p in partitions} == {0: 2, 1: 0, 2: 1, 3: 2}


@pytest.mark.parametrize("spec, error", [
    ({0: [0, 7]}, Errors.InvalidReplicationAssignmentError),        # no broker 7
    ({0: [0, 1], 1: [2]}, Errors.InvalidReplicationAssignmentError),  # inconsistent replication factor
    ({0: [1, 1]}, Errors.InvalidReplicationAssignmentError),        # a broker twice
    ({1: [0]}, Errors.InvalidReplicationAssignmentError),           # partitions must start at 0
])
def test_create_topic_rejects_a_bad_manual_assignment(admin, topic_name, spec, error):
    assert create_topic(admin, topic_name, assignments=spec)["error_code"] == error.errno
    assert topic_name not in admin.list_topics()


def test_manual_assignment_excludes_partition_count_and_replication_factor(admin, topic_name):
    """KRaft refuses counts next to an assignment: the assignment alone says how many and where."""
    for counts in ({"num_partitions": 2}, {"replication_factor": 1}):
        result = create_topic(admin, topic_name, assignments={0: [0], 1: [1]}, **counts)
        assert result["error_code"] == Errors.InvalidRequestError.errno
        assert "manual partition assignment" in result["error_message"]
    assert topic_name not in admin.list_topics()


def test_validate_only_creates_nothing(admin, topic_name):
    result = create_topic(admin, topic_name, validate_only=True, num_partitions=4, replication_factor=2,
                          configs={"retention.ms": "1000"})
    assert (result["error_code"], result["num_partitions"], result["replication_factor"]) == (0, 4, 2)
    assert result["configs"]["retention.ms"]["value"] == "1000"
    assert topic_name not in admin.list_topics()
    assert describe_topic(admin, topic_name)["error_code"] == Errors.UnknownTopicOrPartitionError.errno
    bad = create_topic(admin, topic_name, validate_only=True, num_partitions=1, replication_factor=4)
    assert bad["error_code"] == Errors.InvalidReplicationFactorError.errno
    # Nothing was reserved: the real create succeeds.
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0


def test_create_existing_topic_is_topic_already_exists(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=2, replication_factor=1)["error_code"] == 0
    topic_id = describe_topic(admin, topic_name)["topic_id"]
    again = create_topic(admin, topic_name, num_partitions=5, replication_factor=1)
    assert again["error_code"] == Errors.TopicAlreadyExistsError.errno
    topic = describe_topic(admin, topic_name)
    assert topic["topic_id"] == topic_id and len(topic["partitions"]) == 2
    with pytest.raises(Errors.TopicAlreadyExistsError):
        admin.create_topics({topic_name: {"num_partitions": 1, "replication_factor": 1}})


@pytest.mark.parametrize("spec, error", [
    ({"num_partitions": 1, "replication_factor": 4}, Errors.InvalidReplicationFactorError),
    ({"num_partitions": 1, "replication_factor": 0}, Errors.InvalidReplicationFactorError),
    ({"num_partitions": 0, "replication_factor": 1}, Errors.InvalidPartitionsError),
    ({"num_partitions": -5, "replication_factor": 1}, Errors.InvalidPartitionsError),
    ({"num_partitions": 1, "replication_factor": 1, "configs": {"no.such.config": "1"}},
     Errors.InvalidConfigurationError),
    ({"num_partitions": 1, "replication_factor": 1, "configs": {"retention.ms": "soon"}},
     Errors.InvalidConfigurationError),
    ({"num_partitions": 1, "replication_factor": 1, "configs": {"cleanup.policy": "shred"}},
     Errors.InvalidConfigurationError),
    ({"num_partitions": 1, "replication_factor": 1, "configs": {"min.insync.replicas": "0"}},
     Errors.InvalidConfigurationError),
    ({"num_partitions": 1, "replication_factor": 1, "configs": {"retention.ms": None}},
     Errors.InvalidConfigurationError),
])
def test_create_topic_refuses_bad_arguments(admin, topic_name, spec, error):
    result = create_topic(admin, topic_name, **spec)
    assert result["error_code"] == error.errno, result
    assert result["error_message"]
    assert topic_name not in admin.list_topics()


@pytest.mark.parametrize("name", ["", "bad/name", "a" * 250, ".."])
def test_create_topic_refuses_illegal_names(admin, name):
    assert create_topic(admin, name, num_partitions=1, replication_factor=1)["error_code"] == \
        Errors.InvalidTopicError.errno


def test_names_colliding_by_dot_and_underscore_are_refused(admin, topic_name):
    dotted = topic_name + ".a.b"
    underscored = topic_name + "_a_b"
    assert create_topic(admin, dotted, num_partitions=1, replication_factor=1)["error_code"] == 0
    result = create_topic(admin, underscored, num_partitions=1, replication_factor=1)
    assert result["error_code"] == Errors.InvalidTopicError.errno
    assert dotted in result["error_message"]
    assert underscored not in admin.list_topics()


def test_one_request_creates_many_topics_and_refuses_only_the_bad_ones(admin, engine_cluster, topic_name):
    """A CreateTopics batch is created in one metadata commit: each topic is still checked on
    its own, against the cluster and against the topics before it in the same request."""
    good = [f"{topic_name}-{i}" for i in range(50)]
    specs = {name: {"num_partitions": 2, "replication_factor": 1} for name in good}
    specs[topic_name + ".x"] = {"num_partitions": 1, "replication_factor": 1}
    specs[topic_name + "_x"] = {"num_partitions": 1, "replication_factor": 1}    # collides with the one before
    specs[topic_name + "-rf"] = {"num_partitions": 1, "replication_factor": 9}
    answer = admin.create_topics(specs, raise_errors=False)
    errors = {t["name"]: t["error_code"] for t in answer["topics"]}
    assert [t["name"] for t in answer["topics"]] == list(specs)                 # request order
    assert {n: errors[n] for n in good} == {n: 0 for n in good} and errors[topic_name + ".x"] == 0
    assert errors[topic_name + "_x"] == Errors.InvalidTopicError.errno
    assert errors[topic_name + "-rf"] == Errors.InvalidReplicationFactorError.errno
    listed = set(admin.list_topics())
    assert set(good) | {topic_name + ".x"} <= listed and not {topic_name + "_x", topic_name + "-rf"} & listed
    assert [len(describe_topic(admin, n)["partitions"]) for n in good[::10]] == [2] * 5
    produce(engine_cluster.bootstrap, good[-1], [b"a", b"b"], partition=1)     # and they take data
    assert [r.value for r in consume_from_beginning(engine_cluster.bootstrap, good[-1], partition=1)] == [b"a", b"b"]


# --- DeleteTopics -------------------------------------------------------------------------

def test_delete_topic_removes_metadata_and_every_replica_log(admin, engine_cluster, topic_name):
    assert create_topic(admin, topic_name, num_partitions=3, replication_factor=2)["error_code"] == 0
    for partition in range(3):
        produce(engine_cluster.bootstrap, topic_name, [b"x", b"y"], partition=partition)
    replicas = {(broker, p["partition_index"]) for p in describe_topic(admin, topic_name)["partitions"]
                for broker in p["replica_nodes"]}
    expected = sorted(engine_cluster.data_dir / f"broker-{b}" / f"{topic_name}-{p}" for b, p in replicas)
    wait_until(lambda: partition_dirs(engine_cluster.data_dir, topic_name) == expected, message="every replica's log")

    result = admin.delete_topics([topic_name])
    assert [(t["name"], t["error_code"]) for t in result["topics"]] == [(topic_name, 0)]
    assert topic_name not in admin.list_topics()
    assert describe_topic(admin, topic_name)["error_code"] == Errors.UnknownTopicOrPartitionError.errno
    wait_until(lambda: not partition_dirs(engine_cluster.data_dir, topic_name), message="partition dirs removed")


def test_longest_legal_name_is_created_used_and_deleted(admin, engine_cluster):
    """249 characters: the partition dir and its `.<uuid>-delete` rename must still fit a file name."""
    name = "L" * 249
    assert create_topic(admin, name, num_partitions=2, replication_factor=2)["error_code"] == 0
    assert produce(engine_cluster.bootstrap, name, [b"long"], partition=1) == [0]
    wait_until(lambda: len(partition_dirs(engine_cluster.data_dir, name)) == 4, message="every replica's log")
    admin.delete_topics([name])
    wait_until(lambda: not partition_dirs(engine_cluster.data_dir, name), message="partition dirs removed")
    assert name not in admin.list_topics()


def test_delete_by_topic_id(admin, topic_name):
    topic_id = uuid.UUID(create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["topic_id"])
    result = admin.delete_topics([topic_id])
    (entry,) = result["topics"]
    assert (entry["name"], entry["topic_id"], entry["error_code"]) == (topic_name, str(topic_id), 0)
    assert topic_name not in admin.list_topics()


def test_delete_unknown_topic(admin, topic_name):
    with pytest.raises(Errors.UnknownTopicOrPartitionError):
        admin.delete_topics([topic_name])
    result = admin.delete_topics([uuid.uuid4()], raise_errors=False)
    assert result["topics"][0]["error_code"] == Errors.UnknownTopicIdError.errno


def settled_replica_size(admin, topic: str, replicas: int):
    """The size of partition 0 once all its replicas hold the same bytes (DescribeLogDirs), else None."""
    sizes = [p["partition_size"] for entry in admin.describe_log_dirs({topic: [0]})
             for log_dir in entry["log_dirs"] for t in log_dir["topics"] for p in t["partitions"]]
    return sizes[0] if len(sizes) == replicas and len(set(sizes)) == 1 else None


def test_recreated_topic_is_empty_with_a_new_id(admin, engine_cluster, topic_name):
    old_id = create_topic(admin, topic_name, num_partitions=1, replication_factor=3)["topic_id"]
    produce(engine_cluster.bootstrap, topic_name, [b"old-%d" % i for i in range(50)], partition=0)
    assert offsets(engine_cluster.bootstrap, topic_name) == (0, 50)
    old_size = wait_until(lambda: settled_replica_size(admin, topic_name, 3), message="followers to catch up")
    admin.delete_topics([topic_name])

    new_id = create_topic(admin, topic_name, num_partitions=1, replication_factor=3)["topic_id"]
    assert new_id != old_id
    assert describe_topic(admin, topic_name)["topic_id"] == new_id
    assert offsets(engine_cluster.bootstrap, topic_name) == (0, 0)
    assert produce(engine_cluster.bootstrap, topic_name, [b"new"], partition=0) == [0]
    assert [r.value for r in consume_from_beginning(engine_cluster.bootstrap, topic_name)] == [b"new"]
    # No replica kept the old records: each holds just the new batch.
    new_size = wait_until(lambda: settled_replica_size(admin, topic_name, 3), message="followers to copy the record")
    assert new_size < old_size


# --- CreatePartitions ---------------------------------------------------------------------

def test_create_partitions_grows_the_topic_and_new_partitions_work(admin, engine_cluster, topic_name):
    assert create_topic(admin, topic_name, num_partitions=2, replication_factor=2)["error_code"] == 0
    admin.create_partitions({topic_name: 5})
    partitions = describe_topic(admin, topic_name)["partitions"]
    assert [p["partition_index"] for p in partitions] == list(range(5))
    for p in partitions:
        assert len(set(p["replica_nodes"])) == 2 and p["leader_id"] == p["replica_nodes"][0]
    for partition in (2, 3, 4):
        values = [f"p{partition}-{i}".encode() for i in range(3)]
        assert produce(engine_cluster.bootstrap, topic_name, values, partition=partition) == [0, 1, 2]
        records = consume_from_beginning(engine_cluster.bootstrap, topic_name, partition)
        assert [r.value for r in records] == values


def test_create_partitions_with_manual_assignment(admin, topic_name):
    assert create_topic(admin, topic_name, assignments={0: [0, 1]})["error_code"] == 0
    admin.create_partitions({topic_name: {"count": 3, "assignments": [[2, 0], [1, 2]]}})
    partitions = describe_topic(admin, topic_name)["partitions"]
    assert [p["replica_nodes"] for p in partitions] == [[0, 1], [2, 0], [1, 2]]
    assert [p["leader_id"] for p in partitions] == [0, 2, 1]


def test_create_partitions_refuses_to_shrink_or_keep(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=3, replication_factor=1)["error_code"] == 0
    for count in (2, 3):
        with pytest.raises(Errors.InvalidPartitionsError):
            admin.create_partitions({topic_name: count})
    assert len(describe_topic(admin, topic_name)["partitions"]) == 3


def test_create_partitions_validate_only_and_errors(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=2)["error_code"] == 0
    admin.create_partitions({topic_name: 4}, validate_only=True)
    assert len(describe_topic(admin, topic_name)["partitions"]) == 1
    # New partitions must keep the topic's replication factor.
    with pytest.raises(Errors.InvalidReplicationAssignmentError):
        admin.create_partitions({topic_name: {"count": 2, "assignments": [[0]]}})
    with pytest.raises(Errors.InvalidReplicationAssignmentError):
        admin.create_partitions({topic_name: {"count": 3, "assignments": [[0, 1]]}})  # one list for two
    with pytest.raises(Errors.UnknownTopicOrPartitionError):
        admin.create_partitions({topic_name + "-missing": 2})
    assert len(describe_topic(admin, topic_name)["partitions"]) == 1


def test_confluent_create_partitions(confluent_admin, admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0
    confluent_admin.create_partitions([NewPartitions(topic_name, 3)])[topic_name].result(15)
    assert len(describe_topic(admin, topic_name)["partitions"]) == 3
    with pytest.raises(Exception, match="INVALID_PARTITIONS"):
        confluent_admin.create_partitions([NewPartitions(topic_name, 2)])[topic_name].result(15)
