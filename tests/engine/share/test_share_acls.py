"""Share groups with the authorizer on: confluent-kafka's ShareConsumer logged in with SCRAM
is refused until ACLs allow it, then served; raw requests check each share API's refusal
codes (GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED per partition,
CLUSTER_AUTHORIZATION_FAILED for the brokers' internal APIs) and that an ACL lifts them.
Each test grants to carol and takes it all back after."""
from __future__ import annotations

import base64
import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer, ShareConsumer
from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ConfigResource,
                         ConfigResourceType, NewTopic, ResourcePatternFilter, ResourceType)
from kafka.protocol.admin import (DeleteGroupsRequest, DeleteGroupsResponse, DescribeConfigsRequest,
                                  DescribeConfigsResponse, IncrementalAlterConfigsRequest,
                                  IncrementalAlterConfigsResponse, ListGroupsRequest, ListGroupsResponse)
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from engine.__main__ import main
from engine.protocol import specs as S
from kafka_rules.acls import DESCRIBE
from tests.support.acls import confluent_login, connect_as, grant, revoke_all
from tests.support.sasl import ADMIN, ADMIN_PASSWORD
from tests.support.share import ACCEPT, RawShareMember, coordinator_port, offsets_of, partition_of, topic_id_of
from tests.support.waiting import wait_until

GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 30, 29, 31
CONFIG_GROUP = 32


@pytest.fixture
def user(acl_admin):
    yield "carol"
    revoke_all(acl_admin, "User:carol")


@pytest.fixture
def queue(acl_engine, acl_admin):
    """A topic of one partition with three records, and a share group reading it from the start."""
    topic = f"sq-{uuid.uuid4().hex[:8]}"
    acl_admin.create_topics([NewTopic(topic, 1, 2)])
    producer = Producer({**confluent_login(acl_engine.bootstrap, ADMIN), "acks": "all"})
    for i in range(3):
        producer.produce(topic, f"r{i}".encode())
    assert producer.flush(30) == 0
    group = f"g-{topic}"
    acl_admin.alter_configs([ConfigResource(ConfigResourceType.GROUP, group,
                                            configs={"share.auto.offset.reset": "earliest"})], raise_on_unknown=False)
    return topic, group


def poll_until_error_or_records(consumer: ShareConsumer, want: int):
    """Polls until an error is raised or reported, or `want` records came; returns (error code, values)."""
    values: list[bytes] = []
    found: dict = {}

    def step():
        try:
            for message in consumer.poll(0.5):
                if message.error():
                    found["error"] = message.error().code()
                else:
                    values.append(message.value())
        except KafkaException as exc:
            found["error"] = exc.args[0].code()
        return "error" in found or len(values) >= want
    wait_until(step, timeout=30, message="no error and no records")
    return found.get("error"), values


def test_a_share_consumer_needs_read_on_the_group_and_the_topic(acl_engine, acl_admin, queue, user):
    topic, group = queue
    login = confluent_login(acl_engine.bootstrap, user)

    def consume():
        consumer = ShareConsumer({**login, "group.id": group, "max.poll.records": 10})
        consumer.subscribe([topic])
        try:
            return poll_until_error_or_records(consumer, 3)
        finally:
            consumer.close()
    error, _ = consume()
    assert error == KafkaError.GROUP_AUTHORIZATION_FAILED
    grant(acl_admin, f"User:{user}", "READ", "GROUP", group)
    error, _ = consume()
    assert error == KafkaError.TOPIC_AUTHORIZATION_FAILED        # Metadata and the heartbeat: no DESCRIBE
    grant(acl_admin, f"User:{user}", "DESCRIBE", "TOPIC", topic)
    error, _ = consume()
    assert error == KafkaError.TOPIC_AUTHORIZATION_FAILED        # ShareFetch: no READ
    grant(acl_admin, f"User:{user}", "READ", "TOPIC", topic)
    error, values = consume()
    assert error is None and sorted(values) == [b"r0", b"r1", b"r2"]


def revoke(admin, user: str, operation: str, resource_type: str, name: str) -> None:
    pattern = ResourcePatternFilter(ResourceType[resource_type], name, ACLResourcePatternType.LITERAL)
    for _, _, error in admin.delete_acls([ACLFilter(f"User:{user}", None, ACLOperation[operation],
                                                    ACLPermissionType.ALLOW, pattern)]):
        assert error.errno == 0, error


def partition_error(response) -> int:
    return partition_of(response).error_code


def test_share_fetch_and_acknowledge_need_read_on_the_group_and_each_topic(acl_engine, acl_admin, queue, user):
    topic, group = queue
    grant(acl_admin, f"User:{user}", "DESCRIBE", "GROUP", group)      # to find the coordinator
    grant(acl_admin, f"User:{user}", "DESCRIBE", "TOPIC", topic)      # to see the topic
    member = RawShareMember(acl_engine.port, group, topic, uuid.uuid4().hex[:22], connect=connect_as(user))
    try:
        assert member.heartbeat(epoch=0).error_code == GROUP_AUTHORIZATION_FAILED
        assert member.fetch().error_code == GROUP_AUTHORIZATION_FAILED
        assert member.acknowledge([(0, 0, [ACCEPT])], epoch=1).error_code == GROUP_AUTHORIZATION_FAILED
        grant(acl_admin, f"User:{user}", "READ", "GROUP", group)
        wait_until(lambda: member.heartbeat(epoch=0).error_code == 0, timeout=15, message="the READ on the group")

        first = member.fetch(max_wait_ms=0)
        assert first.error_code == 0 and partition_error(first) == TOPIC_AUTHORIZATION_FAILED
        assert offsets_of(first) == []
        grant(acl_admin, f"User:{user}", "READ", "TOPIC", topic)
        fetched = []
        wait_until(lambda: fetched.extend(offsets_of(member.fetch(max_wait_ms=200))) or fetched,
                   timeout=15, message="records once READ on the topic is granted")
        assert fetched == [0, 1, 2]

        revoke(acl_admin, user, "READ", "TOPIC", topic)
        refused = []
        wait_until(lambda: refused.append(member.acknowledge([(0, 2, [ACCEPT])])) or
                   partition_error(refused[-1]) == TOPIC_AUTHORIZATION_FAILED, timeout=15, message="the revoke")
        assert refused[-1].error_code == 0
        piggybacked = partition_of(member.fetch(acks=[(0, 2, [ACCEPT])], max_wait_ms=0))
        assert (piggybacked.error_code, piggybacked.acknowledge_error_code) == (TOPIC_AUTHORIZATION_FAILED,) * 2
        grant(acl_admin, f"User:{user}", "READ", "TOPIC", topic)
        wait_until(lambda: partition_error(member.acknowledge([(0, 2, [ACCEPT])])) == 0, timeout=15,
                   message="the acknowledgement once READ is back (the records were still held)")
    finally:
        member.close()


def test_a_share_heartbeat_needs_describe_on_every_subscribed_topic(acl_engine, acl_admin, queue, user):
    topic, group = queue
    hidden = f"hidden-{uuid.uuid4().hex[:8]}"
    acl_admin.create_topics([NewTopic(hidden, 1, 1)])
    grant(acl_admin, f"User:{user}", "READ", "GROUP", group)
    grant(acl_admin, f"User:{user}", "DESCRIBE", "TOPIC", topic)
    member = RawShareMember(acl_engine.port, group, topic, uuid.uuid4().hex[:22], connect=connect_as(user))
    try:
        refused = member.heartbeat(epoch=0, topics=[topic, hidden])
        assert refused.error_code == TOPIC_AUTHORIZATION_FAILED and hidden in refused.error_message
        assert topic not in refused.error_message
        assert member.heartbeat(epoch=0, topics=[topic]).error_code == 0
        # Describing the group shows its assignment: bob needs DESCRIBE on its topic too.
        grant(acl_admin, "User:bob", "DESCRIBE", "GROUP", group)
        bob = connect_as("bob")(coordinator_port(acl_engine.port, group, connect=connect_as(ADMIN)))
        try:
            described = describe_group(bob, group)
            assert (described.error_code, described.members) == (TOPIC_AUTHORIZATION_FAILED, [])
            assert described.error_message == "The described group uses topics that the client is not " \
                                              "authorized to describe."
            grant(acl_admin, "User:bob", "DESCRIBE", "TOPIC", topic)
            assert [m.member_id for m in describe_group(bob, group).members] == [member.member_id]
        finally:
            bob.close()
    finally:
        member.close()
        revoke_all(acl_admin, "User:bob")


def state_requests(group: str, topic_id) -> list:
    """One request of each internal share state API (keys 83-87) for partition 0 of the topic."""
    init, read = S.InitializeShareGroupStateRequest, S.ReadShareGroupStateRequest
    write, summary = S.WriteShareGroupStateRequest, S.ReadShareGroupStateSummaryRequest
    delete = S.DeleteShareGroupStateRequest
    return [
        (init(group_id=group, topics=[init.InitializeStateData(topic_id=topic_id, partitions=[
            init.InitializeStateData.PartitionData(partition=0, state_epoch=1, start_offset=0)])]),
         S.InitializeShareGroupStateResponse),
        (read(group_id=group, topics=[read.ReadStateData(topic_id=topic_id, partitions=[
            read.ReadStateData.PartitionData(partition=0, leader_epoch=-1)])]), S.ReadShareGroupStateResponse),
        (write(group_id=group, topics=[write.WriteStateData(topic_id=topic_id, partitions=[
            write.WriteStateData.PartitionData(partition=0, state_epoch=1, leader_epoch=0, start_offset=0,
                                               state_batches=[])])]), S.WriteShareGroupStateResponse),
        (summary(group_id=group, topics=[summary.ReadStateSummaryData(topic_id=topic_id, partitions=[
            summary.ReadStateSummaryData.PartitionData(partition=0, leader_epoch=-1)])]),
         S.ReadShareGroupStateSummaryResponse),
        (delete(group_id=group, topics=[delete.DeleteStateData(topic_id=topic_id, partitions=[
            delete.DeleteStateData.PartitionData(partition=0)])]), S.DeleteShareGroupStateResponse),
    ]


def state_errors(client, group: str, topic_id) -> list[int]:
    return [client.request(request, 0, response_class).results[0].partitions[0].error_code
            for request, response_class in state_requests(group, topic_id)]


def share_coordinator_error(client, key: str) -> int:
    return client.request(FindCoordinatorRequest(key_type=2, coordinator_keys=[key]), 6,
                          FindCoordinatorResponse).coordinators[0].error_code


def test_the_share_state_apis_and_share_coordinator_keys_need_cluster_action(acl_engine, acl_admin, queue, user):
    topic, group = queue
    topic_id = topic_id_of(acl_engine.port, topic, connect_as(ADMIN))
    key = f"{group}:{_base64_uuid(topic_id)}:0"
    client = connect_as(user)(acl_engine.port)
    try:
        assert state_errors(client, group, topic_id) == [CLUSTER_AUTHORIZATION_FAILED] * 5
        assert share_coordinator_error(client, key) == CLUSTER_AUTHORIZATION_FAILED
        grant(acl_admin, f"User:{user}", "CLUSTER_ACTION", "CLUSTER", "kafka-cluster")
        wait_until(lambda: CLUSTER_AUTHORIZATION_FAILED not in state_errors(client, group, topic_id), timeout=15,
                   message="the state APIs once CLUSTER_ACTION is granted")
        wait_until(lambda: share_coordinator_error(client, key) == 0, timeout=15, message="the share coordinator")
    finally:
        client.close()


def _base64_uuid(value) -> str:
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


@pytest.fixture
def used_group(acl_engine, queue):
    """The queue's group after a member read and accepted its three records, then left: empty, with state."""
    topic, group = queue
    member = RawShareMember(acl_engine.port, group, topic, uuid.uuid4().hex[:22], connect=connect_as(ADMIN))
    try:
        member.join()
        fetched = []
        wait_until(lambda: fetched.extend(offsets_of(member.fetch(max_wait_ms=200))) or len(fetched) >= 3,
                   timeout=15, message="the three records")
        assert partition_of(member.fetch(acks=[(0, 2, [ACCEPT])], epoch=-1)).acknowledge_error_code == 0
        assert member.heartbeat(epoch=-1).error_code == 0
    finally:
        member.close()
    return topic, group


def describe_offsets(client, group: str, topics):
    R = S.DescribeShareGroupOffsetsRequest
    wanted = None if topics is None else [R.DescribeShareGroupOffsetsRequestGroup.DescribeShareGroupOffsetsRequestTopic(
        topic_name=t, partitions=[0]) for t in topics]
    return client.request(R(groups=[R.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=wanted)]), 1,
                          S.DescribeShareGroupOffsetsResponse).groups[0]


def alter_offsets(client, group: str, topic: str):
    R = S.AlterShareGroupOffsetsRequest
    return client.request(R(group_id=group, topics=[R.AlterShareGroupOffsetsRequestTopic(
        topic_name=topic, partitions=[R.AlterShareGroupOffsetsRequestTopic.AlterShareGroupOffsetsRequestPartition(
            partition_index=0, start_offset=1)])]), 0, S.AlterShareGroupOffsetsResponse)


def delete_offsets(client, group: str, topic: str):
    R = S.DeleteShareGroupOffsetsRequest
    return client.request(R(group_id=group, topics=[R.DeleteShareGroupOffsetsRequestTopic(topic_name=topic)]), 0,
                          S.DeleteShareGroupOffsetsResponse)


def describe_group(client, group: str):
    return client.request(S.ShareGroupDescribeRequest(group_ids=[group], include_authorized_operations=True), 1,
                          S.ShareGroupDescribeResponse).groups[0]


def listed_share_groups(client) -> set[str]:
    listed = client.request(ListGroupsRequest(states_filter=[], types_filter=["share"]), 5, ListGroupsResponse)
    return {g.group_id for g in listed.groups}


def delete_group_error(client, group: str) -> int:
    return client.request(DeleteGroupsRequest(groups_names=[group]), 2, DeleteGroupsResponse).results[0].error_code


def test_share_group_admin_apis_need_their_operations(acl_engine, acl_admin, used_group, user):
    topic, group = used_group
    client = connect_as(user)(coordinator_port(acl_engine.port, group, connect=connect_as(ADMIN)))
    principal = f"User:{user}"
    try:
        assert group not in listed_share_groups(client)
        assert describe_group(client, group).error_code == GROUP_AUTHORIZATION_FAILED
        assert describe_offsets(client, group, [topic]).error_code == GROUP_AUTHORIZATION_FAILED
        grant(acl_admin, principal, "DESCRIBE", "GROUP", group)
        wait_until(lambda: group in listed_share_groups(client), timeout=15, message="the group in ListGroups")
        described_group = describe_group(client, group)
        assert described_group.error_code == 0 and described_group.group_state == "Empty"
        assert described_group.authorized_operations == {DESCRIBE}
        described = describe_offsets(client, group, [topic])
        assert described.error_code == 0
        assert described.topics[0].partitions[0].error_code == TOPIC_AUTHORIZATION_FAILED
        assert describe_offsets(client, group, None).topics == []       # all partitions: the topic left out
        grant(acl_admin, principal, "DESCRIBE", "TOPIC", topic)
        wait_until(lambda: [t.topic_name for t in describe_offsets(client, group, None).topics] == [topic],
                   timeout=15, message="the topic once described")
        assert describe_offsets(client, group, [topic]).topics[0].partitions[0].start_offset == 3

        assert alter_offsets(client, group, topic).error_code == GROUP_AUTHORIZATION_FAILED
        grant(acl_admin, principal, "READ", "GROUP", group)
        wait_until(lambda: alter_offsets(client, group, topic).error_code == 0, timeout=15, message="READ on group")
        assert alter_offsets(client, group, topic).responses[0].partitions[0].error_code == TOPIC_AUTHORIZATION_FAILED
        grant(acl_admin, principal, "READ", "TOPIC", topic)
        wait_until(lambda: alter_offsets(client, group, topic).responses[0].partitions[0].error_code == 0,
                   timeout=15, message="READ on the topic")
        assert describe_offsets(client, group, [topic]).topics[0].partitions[0].start_offset == 1

        assert delete_offsets(client, group, topic).error_code == GROUP_AUTHORIZATION_FAILED
        assert delete_group_error(client, group) == GROUP_AUTHORIZATION_FAILED
        revoke(acl_admin, user, "READ", "TOPIC", topic)
        grant(acl_admin, principal, "DELETE", "GROUP", group)
        refused = []
        wait_until(lambda: refused.append(delete_offsets(client, group, topic)) or refused[-1].error_code == 0,
                   timeout=15, message="DELETE on the group")
        assert refused[-1].responses[0].partitions[0].error_code == TOPIC_AUTHORIZATION_FAILED
        assert describe_offsets(client, group, [topic]).topics[0].partitions[0].start_offset == 1   # kept
        assert delete_group_error(client, group) == 0
        assert group not in listed_share_groups(client)
    finally:
        client.close()


def describe_group_configs_error(client, group: str) -> int:
    R = DescribeConfigsRequest
    return client.request(R(resources=[R.DescribeConfigsResource(resource_type=CONFIG_GROUP, resource_name=group,
                                                                 configuration_keys=None)],
                            include_synonyms=False, include_documentation=False), 4,
                          DescribeConfigsResponse).results[0].error_code


def alter_group_configs_error(client, group: str) -> int:
    R = IncrementalAlterConfigsRequest
    Resource = R.AlterConfigsResource
    return client.request(R(resources=[Resource(resource_type=CONFIG_GROUP, resource_name=group, configs=[
        Resource.AlterableConfig(name="share.record.lock.duration.ms", config_operation=0, value="15000")])],
        validate_only=False), 1, IncrementalAlterConfigsResponse).responses[0].error_code


def test_a_share_groups_configs_need_describe_configs_and_alter_configs_on_the_group(acl_engine, acl_admin,
                                                                                    queue, user):
    _, group = queue
    client = connect_as(user)(acl_engine.port)
    try:
        assert describe_group_configs_error(client, group) == GROUP_AUTHORIZATION_FAILED
        assert alter_group_configs_error(client, group) == GROUP_AUTHORIZATION_FAILED
        grant(acl_admin, f"User:{user}", "DESCRIBE_CONFIGS", "GROUP", group)
        wait_until(lambda: describe_group_configs_error(client, group) == 0, timeout=15, message="DESCRIBE_CONFIGS")
        assert alter_group_configs_error(client, group) == GROUP_AUTHORIZATION_FAILED
        grant(acl_admin, f"User:{user}", "ALTER_CONFIGS", "GROUP", group)
        wait_until(lambda: alter_group_configs_error(client, group) == 0, timeout=15, message="ALTER_CONFIGS")
    finally:
        client.close()


def test_the_acls_tools_consumer_set_is_what_a_share_consumer_needs(acl_engine, queue, user, tmp_path, capsys):
    """`python -m engine acls --add --consumer --topic T --group G` (kafka-acls.sh's set: READ and
    DESCRIBE on the topic, READ on the group) lets a share consumer of the group read the topic."""
    topic, group = queue
    config = tmp_path / "admin.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                      f'username="{ADMIN}" password="{ADMIN_PASSWORD}";\n')
    assert main(["acls", "--bootstrap-server", acl_engine.bootstrap, "--command-config", str(config), "--add",
                 "--consumer", "--allow-principal", f"User:{user}", "--topic", topic, "--group", group]) == 0
    capsys.readouterr()
    consumer = ShareConsumer({**confluent_login(acl_engine.bootstrap, user), "group.id": group})
    consumer.subscribe([topic])
    try:
        error, values = poll_until_error_or_records(consumer, 3)
    finally:
        consumer.close()
    assert error is None and sorted(values) == [b"r0", b"r1", b"r2"]


@pytest.mark.parametrize("ask, api_name", [
    (lambda client, group, topic: describe_offsets(client, group, [topic]), "DescribeShareGroupOffsets"),
    (alter_offsets, "AlterShareGroupOffsets"), (delete_offsets, "DeleteShareGroupOffsets")])
def test_a_share_offsets_request_refused_at_the_group_asks_nothing_about_its_topics(acl_engine, user, ask, api_name):
    """As KafkaApis: the group is checked first, so the audit log has no topic decision for it."""
    topic = f"unasked-{uuid.uuid4().hex[:8]}"
    client = connect_as(user)(acl_engine.port)
    try:
        assert ask(client, f"g-{topic}", topic).error_code == GROUP_AUTHORIZATION_FAILED
    finally:
        client.close()
    log = acl_engine.log_path.read_text()
    assert f"Group:LITERAL:g-{topic} for request = {api_name}" in log
    assert f"Topic:LITERAL:{topic}" not in log
