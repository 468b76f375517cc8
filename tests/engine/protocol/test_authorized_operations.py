"""Authorized operations (KIP-430) with no authorizer: Kafka answers every operation its ACL
model defines for the resource (AclEntry.supportedOperations), 8 for a topic and 7 for the
cluster, and -2147483648 ("not requested") when the client did not ask."""
import pytest
from confluent_kafka import TopicCollection
from confluent_kafka.admin import AclOperation
from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from tests.engine.protocol.admin_support import create_topic
from tests.support.raw_client import RawClient

TOPIC_OPERATIONS = {"READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"}
CLUSTER_OPERATIONS = {"CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                      "IDEMPOTENT_WRITE"}
NOT_REQUESTED = None   # kafka.protocol decodes the -2147483648 sentinel as None


@pytest.fixture(scope="module")
def topic(admin):
    name = "authorized-operations"
    assert create_topic(admin, name, num_partitions=1, replication_factor=1)["error_code"] == 0
    return name


def test_kafka_python_topic_and_cluster_operations(admin, topic):
    (described,) = admin.describe_topics([topic])
    assert set(described["authorized_operations"]) == TOPIC_OPERATIONS
    assert len(described["authorized_operations"]) == 8
    cluster = admin.describe_cluster()
    assert set(cluster["authorized_operations"]) == CLUSTER_OPERATIONS
    assert len(cluster["authorized_operations"]) == 7


def test_confluent_kafka_topic_and_cluster_operations(confluent_admin, topic):
    described = confluent_admin.describe_topics(TopicCollection([topic]), include_authorized_operations=True)
    operations = described[topic].result(15).authorized_operations
    assert {op.name for op in operations} == TOPIC_OPERATIONS and len(operations) == 8
    cluster = confluent_admin.describe_cluster(include_authorized_operations=True).result(15)
    assert {op.name for op in cluster.authorized_operations} == CLUSTER_OPERATIONS
    assert AclOperation.IDEMPOTENT_WRITE in cluster.authorized_operations


def metadata(port: int, version: int, *, topics, topic_ops: bool, cluster_ops: bool = False) -> MetadataResponse:
    request = MetadataRequest(topics=None if topics is None else [
                                  MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
                              allow_auto_topic_creation=False, include_cluster_authorized_operations=cluster_ops,
                              include_topic_authorized_operations=topic_ops)
    client = RawClient(port)
    try:
        return client.request(request, version, MetadataResponse)
    finally:
        client.close()


def test_raw_metadata_answers_topic_operations_only_when_asked(engine_cluster, topic):
    port = engine_cluster.ports[0]
    # The all-topics answer is cached per image: asking and not asking must not share an entry.
    for topics in (None, [topic], None):
        asked = {t.name: t.authorized_operations for t in metadata(port, 12, topics=topics, topic_ops=True).topics}
        assert asked[topic] == {3, 4, 5, 6, 7, 8, 10, 11}
        unasked = {t.name: t.authorized_operations for t in metadata(port, 12, topics=topics, topic_ops=False).topics}
        assert unasked[topic] is NOT_REQUESTED
    v10 = metadata(port, 10, topics=[], topic_ops=False, cluster_ops=True)
    assert v10.authorized_operations == {5, 7, 8, 9, 10, 11, 12}
    assert metadata(port, 10, topics=[], topic_ops=False).authorized_operations is NOT_REQUESTED


def test_raw_describe_cluster_answers_cluster_operations_only_when_asked(engine_cluster):
    client = RawClient(engine_cluster.ports[1])
    try:
        for asked, expected in ((True, {5, 7, 8, 9, 10, 11, 12}), (False, NOT_REQUESTED)):
            request = DescribeClusterRequest(include_cluster_authorized_operations=asked, endpoint_type=1)
            assert client.request(request, 1, DescribeClusterResponse).authorized_operations == expected
    finally:
        client.close()
