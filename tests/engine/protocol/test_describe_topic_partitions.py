"""DescribeTopicPartitions (KIP-966) with kafka-python's describe_topic_partitions: pages by
partitions with a cursor, unknown topics answered, and with the authorizer on, the principal's
own view (refused topics, authorized operations)."""
import uuid

import kafka.errors as Errors
from kafka.admin import ACLOperation, NewTopic

from tests.support.acls import admin_client, grant, revoke_all


def operations(bitfield: int) -> set[str]:
    """kafka-python gives this field as the raw int32: bit n is AclOperation n."""
    return {op.name for op in ACLOperation if bitfield & (1 << op.value)}


def names_and_partitions(result) -> list[tuple[str, list[int]]]:
    return [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in result["topics"]]


def test_pages_follow_the_cursor(admin):
    prefix = f"dtp-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(f"{prefix}-a", 5, 1), NewTopic(f"{prefix}-b", 2, 1)])
    wanted = [f"{prefix}-b", f"{prefix}-a"]
    first = admin.describe_topic_partitions(wanted, response_partition_limit=3)
    assert names_and_partitions(first) == [(f"{prefix}-a", [0, 1, 2])]
    assert first["next_cursor"] == {"topic_name": f"{prefix}-a", "partition_index": 3}
    second = admin.describe_topic_partitions(wanted, response_partition_limit=3, cursor=first["next_cursor"])
    assert names_and_partitions(second) == [(f"{prefix}-a", [3, 4]), (f"{prefix}-b", [0])]
    third = admin.describe_topic_partitions(wanted, response_partition_limit=3, cursor=second["next_cursor"])
    assert names_and_partitions(third) == [(f"{prefix}-b", [1])] and third["next_cursor"] is None
    (topic,) = admin.describe_topic_partitions([f"{prefix}-b"])["topics"]
    assert topic["partitions"][0]["leader_id"] >= 0 and topic["partitions"][0]["replica_nodes"]
    assert operations(topic["topic_authorized_operations"]) == {      # no authorizer: all of a topic's
        "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"}


def test_an_unknown_topic_is_answered_with_its_error(admin):
    (missing,) = admin.describe_topic_partitions(["no-such-topic"])["topics"]
    assert missing["error_code"] == Errors.UnknownTopicOrPartitionError.errno


def test_the_principals_own_view(acl_engine, acl_admin):
    seen, hidden = f"dtp-seen-{uuid.uuid4().hex[:6]}", f"dtp-hidden-{uuid.uuid4().hex[:6]}"
    acl_admin.create_topics([NewTopic(seen, 1, 2), NewTopic(hidden, 1, 2)])
    grant(acl_admin, "User:bob", "READ", "TOPIC", seen)
    bob = admin_client(acl_engine.bootstrap, "bob")
    try:
        answered = {t["name"]: t for t in bob.describe_topic_partitions([seen, hidden])["topics"]}
        assert answered[hidden]["error_code"] == Errors.TopicAuthorizationFailedError.errno
        assert answered[hidden]["partitions"] == []
        assert operations(answered[seen]["topic_authorized_operations"]) == {"READ", "DESCRIBE"}
        everything = {t["name"] for t in bob.describe_topic_partitions([])["topics"]}
        assert seen in everything and hidden not in everything
    finally:
        revoke_all(acl_admin, "User:bob")
        bob.close()
