"""Reassignments changed while under way, with real clients: a new target or a cancel leaves
the ISR and the leader within the partition's replicas, as Kafka's controller does; a journal
that names a non-replica in an ISR is mended at start."""
import kafka.errors as Errors
import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, NewTopic
from kafka.protocol.admin import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse

from engine.cluster import records as R
from engine.cluster.journal import MetadataJournal
from engine.cluster.metadata import MetadataImage
from tests.engine.cluster.helpers import partition_state, start_broker, stop_broker, wait_until
from tests.support.partition_io import read_values, send_values
from tests.support.raw_client import RawClient

# Auto leader rebalance off: the tests place leaderships themselves.
FAST = {"replica.lag.time.max.ms": "2000", "auto.leader.rebalance.enable": "false"}


@pytest.fixture
def cluster(engine_factory):
    return engine_factory(brokers=3, configs=FAST)


def _stuck_reassignment(cluster, topic: str) -> KafkaAdminClient:
    """`topic` on broker 0 alone, being moved to [0, 1, 2] while broker 2 is stopped: broker 1
    catches up and joins the ISR, and the move stays under way."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=15000)
    admin.create_topics([NewTopic(topic, -1, -1, replica_assignments={0: [0]})])
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
    for i in range(10):
        producer.send(topic, f"r-{i}".encode()).get(timeout=15)
    producer.close()
    stop_broker(cluster, 2)
    tp = TopicPartition(topic, 0)
    assert admin.alter_partition_reassignments({tp: [0, 1, 2]}) == {tp: None}
    wait_until(lambda: sorted(partition_state(cluster.bootstrap, topic)[0][2]) == [0, 1],
               message="broker 1 to join the ISR")
    assert admin.list_partition_reassignments()[tp]["adding_replicas"] == [1, 2]
    return admin


def test_a_new_target_drops_an_adding_replica_from_the_isr(cluster, topic_name):
    """min.insync.replicas=2 must still mean two copies: a replica the new target leaves out
    no longer counts in the ISR of a partition it is not a replica of."""
    admin = _stuck_reassignment(cluster, topic_name)
    admin.alter_configs([ConfigResource("TOPIC", topic_name, {"min.insync.replicas": "2"})])
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", retries=0)
    producer.send(topic_name, b"two copies").get(timeout=15)
    tp = TopicPartition(topic_name, 0)
    assert admin.alter_partition_reassignments({tp: [0]}) == {tp: None}
    assert partition_state(cluster.bootstrap, topic_name)[0] == (0, [0], [0])
    assert admin.list_partition_reassignments() == {}
    with pytest.raises(Errors.NotEnoughReplicasError):
        producer.send(topic_name, b"one copy").get(timeout=15)
    producer.close()
    admin.close()


def test_a_new_target_moves_leadership_off_a_replica_it_drops(cluster, topic_name):
    admin = _stuck_reassignment(cluster, topic_name)
    tp = TopicPartition(topic_name, 0)
    assert admin.alter_partition_reassignments({tp: [1, 0, 2]}) == {tp: None}
    admin.elect_leaders(0, {topic_name: [0]})
    assert partition_state(cluster.bootstrap, topic_name)[0][0] == 1
    assert admin.alter_partition_reassignments({tp: [0]}) == {tp: None}
    assert partition_state(cluster.bootstrap, topic_name)[0] == (0, [0], [0])
    admin.close()


def test_cancel_with_only_added_replicas_in_sync_needs_unclean_election(cluster, topic_name):
    """Broker 0, the one original replica, stops: broker 1, being added, is the whole ISR.
    Cancelling would leave the partition to broker 0 alone, out of sync: Kafka refuses that
    unless the topic allows unclean election."""
    _stuck_reassignment(cluster, topic_name).close()
    tp = TopicPartition(topic_name, 0)
    stop_broker(cluster, 0)             # the controller moves to broker 1
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=15000)
    wait_until(lambda: partition_state(cluster.bootstrap, topic_name)[0][0] == 1, message="broker 1 to lead")
    assert admin.alter_partition_reassignments({tp: None})[tp] is Errors.InvalidReplicationAssignmentError
    assert partition_state(cluster.bootstrap, topic_name)[0] == (1, [0, 1, 2], [1])
    start_broker(cluster, 0)
    start_broker(cluster, 2)
    wait_until(lambda: admin.list_partition_reassignments() == {}, message="the move to finish instead")
    leader, replicas, isr = partition_state(cluster.bootstrap, topic_name)[0]
    assert (leader, replicas, sorted(isr)) == (1, [0, 1, 2], [0, 1, 2])
    admin.close()


def test_a_journal_with_a_non_replica_in_an_isr_is_mended_at_start(engine_factory, tmp_path, topic_name):
    """Such a record (a retarget under way once wrote one) stopped the next start; now the
    controller takes the stray broker out of the ISR before any broker serves."""
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=2, data_dir=data_dir)
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, request_timeout_ms=15000)
    admin.create_topics([NewTopic(topic_name, -1, -1, replica_assignments={0: [0]})])
    admin.close()
    send_values(engine.bootstrap, topic_name, [b"kept"], acks="all")
    assert engine.terminate() == 0

    journal = MetadataJournal(data_dir / "__cluster_metadata")
    image = MetadataImage()
    for _, _, record in journal.replay():
        R.apply(image, record)
    state = image.partition(topic_name, 0)
    journal.append([R.partition_record(image.topics[topic_name].topic_id, 0, [0], 0, state.leader_epoch, [0, 1],
                                       state.partition_epoch + 1)])
    journal.close()

    engine = engine_factory(brokers=2, data_dir=data_dir)
    assert partition_state(engine.bootstrap, topic_name)[0] == (0, [0], [0])
    assert read_values(engine.bootstrap, topic_name, 1) == [b"kept"]
    assert f"{topic_name}-0 named brokers that are not its replicas: ISR [0, 1] -> [0]" in engine.log_text()


@pytest.mark.parametrize("target, message", [
    ([], "The manual partition assignment includes an empty replica list."),
    ([1, 0, 1], "The manual partition assignment includes the broker 1 more than once."),
    ([7, 0], "The manual partition assignment includes broker 7, but no such broker is registered."),
    ([-1, 0], "The manual partition assignment includes broker -1, but no such broker is registered."),
    ([1, 1, 9], "The manual partition assignment includes the broker 1 more than once."),   # in id order
])
def test_a_bad_target_is_refused_with_kafkas_message(engine_factory, topic_name, target, message):
    engine = engine_factory(brokers=2)
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, request_timeout_ms=15000)
    admin.create_topics([NewTopic(topic_name, -1, -1, replica_assignments={0: [0]})])
    Topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    client = RawClient(engine.ports[0])
    try:
        response = client.request(AlterPartitionReassignmentsRequest(timeout_ms=10000, topics=[Topic(
            name=topic_name, partitions=[Topic.ReassignablePartition(partition_index=0, replicas=target)])]),
            0, AlterPartitionReassignmentsResponse)
    finally:
        client.close()
    (partition,) = response.responses[0].partitions
    assert (partition.error_code, partition.error_message) == (Errors.InvalidReplicationAssignmentError.errno, message)
    assert partition_state(engine.bootstrap, topic_name)[0] == (0, [0], [0])
    admin.close()
