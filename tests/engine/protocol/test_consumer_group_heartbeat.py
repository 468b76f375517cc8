"""ConsumerGroupHeartbeat (KIP-848) spoken with raw requests, so every step of a rebalance and
every error code can be checked exactly; librdkafka drives it in test_consumer_group_clients."""
from __future__ import annotations

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewPartitions
from kafka.protocol.admin import (DeleteGroupsRequest, DeleteGroupsResponse, DescribeConfigsRequest,
                                  DescribeConfigsResponse, ListGroupsRequest, ListGroupsResponse)
from kafka.protocol.consumer import OffsetDeleteRequest, OffsetDeleteResponse
from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse

from engine.protocol.specs import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from tests.support.groups import GROUP_TEST_CONFIGS, GroupClient, create_topic
from tests.support.groups import HeartbeatMember as Member
from tests.support.groups import set_group_configs, topic_ids, wait_until

FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, INVALID_REQUEST, UNSUPPORTED_ASSIGNOR = 110, 25, 42, 112
UNRELEASED_INSTANCE_ID, STALE_MEMBER_EPOCH, UNSUPPORTED_VERSION, INCONSISTENT_GROUP_PROTOCOL = 111, 113, 35, 23
GROUP_ID_NOT_FOUND = 69


@pytest.fixture
def topic(group_cluster, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 3)
    return topic_name


@pytest.fixture
def client(group_cluster, group_id):
    client = GroupClient(group_cluster, group_id)
    yield client
    client.close()


def tps(topic, *partitions):
    return {(topic, p) for p in partitions}


def test_a_partition_moves_only_after_its_old_owner_revoked_it(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    first = Member(client, "member-1", [topic], ids)
    joined = first.heartbeat()
    assert (joined.error_code, joined.member_id, joined.member_epoch) == (0, "member-1", 1)
    assert joined.heartbeat_interval_ms == 200   # group.consumer.heartbeat.interval.ms of the fixture
    assert first.owned == tps(topic, 0, 1, 2)
    first.ack()

    second = Member(GroupClient(group_cluster, client.group_id), "member-2", [topic], ids)
    try:
        answer = second.heartbeat()
        assert (answer.error_code, answer.member_epoch) == (0, 2)
        assert second.owned == set()                  # its partition is still the first member's
        revoking = first.heartbeat()                  # told to keep two and give one up
        assert (revoking.member_epoch, len(first.owned)) == (1, 2)
        given_up = tps(topic, 0, 1, 2) - first.owned
        assert second.heartbeat().assignment is None and second.owned == set()
        acked = first.ack()                           # now it no longer owns the partition
        assert (acked.member_epoch, len(first.owned)) == (2, 2)
        assert second.heartbeat().error_code == 0 and second.owned == given_up
        assert first.owned.isdisjoint(second.owned)

        described = client.client.request(ConsumerGroupDescribeRequest(
            group_ids=[client.group_id], include_authorized_operations=False), 0, ConsumerGroupDescribeResponse)
        [group] = described.groups
        assert (group.error_code, group.group_state, group.group_epoch, group.assignment_epoch,
                group.assignor_name) == (0, "Stable", 2, 2, "uniform")
        members = {m.member_id: m for m in group.members}
        assert {(t.topic_name, p) for t in members["member-2"].assignment.topic_partitions
                for p in t.partitions} == given_up
        assert members["member-1"].subscribed_topic_names == [topic]

        left = second.heartbeat(epoch=-1)
        assert (left.error_code, left.member_epoch) == (0, -1)
        assert first.heartbeat().error_code == 0 and first.owned == tps(topic, 0, 1, 2)
        assert first.epoch == 3
    finally:
        second.client.close()


def test_fencing_and_invalid_requests_get_kafkas_errors(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    member = Member(client, "member-1", [topic], ids)
    member.heartbeat()
    assert member.heartbeat(epoch=member.epoch + 1).error_code == FENCED_MEMBER_EPOCH
    assert Member(client, "stranger", [topic], ids).heartbeat(epoch=1).error_code == UNKNOWN_MEMBER_ID
    assert member.heartbeat(epoch=0, topics=None).error_code == INVALID_REQUEST
    assert member.heartbeat(epoch=-3).error_code == INVALID_REQUEST
    assert member.heartbeat(regex="[unclosed").error_code == 128   # INVALID_REGULAR_EXPRESSION
    unsupported = member.heartbeat(assignor="sticky")
    assert unsupported.error_code == UNSUPPORTED_ASSIGNOR and "uniform, range" in unsupported.error_message
    # A member that rejoins with epoch 0 starts over with its share.
    rejoined = member.heartbeat(epoch=0)
    assert (rejoined.error_code, member.owned) == (0, tps(topic, 0, 1, 2))


def test_range_assignor_on_request(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    members = [Member(client, f"member-{i}", [topic], ids) for i in (1, 2)]
    for member in members:
        member.heartbeat(assignor="range")
    members[0].heartbeat()
    members[0].ack()
    members[1].heartbeat()
    assert (members[0].owned, members[1].owned) == (tps(topic, 0, 1), tps(topic, 2))


def test_static_member_hands_its_partitions_to_its_next_instance(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    old = Member(client, "instance-a-1", [topic], ids, instance_id="instance-a")
    old.heartbeat()
    new = Member(client, "instance-a-2", [topic], ids, instance_id="instance-a")
    assert new.heartbeat().error_code == UNRELEASED_INSTANCE_ID
    assert old.heartbeat(epoch=-2).member_epoch == -2
    taken_over = new.heartbeat()
    assert (taken_over.error_code, new.owned) == (0, tps(topic, 0, 1, 2))
    assert old.heartbeat(epoch=1).error_code == 82   # FENCED_INSTANCE_ID: replaced


def test_offsets_of_a_consumer_group_check_the_member_epoch(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    member = Member(client, "member-1", [topic], ids)
    member.heartbeat()
    commit = {(topic, 0): 5}
    assert client.commit(commit, member_id="member-1", generation_id=member.epoch + 1) == {(topic, 0): STALE_MEMBER_EPOCH}
    assert client.commit(commit, member_id="member-1", generation_id=member.epoch, version=8) == \
        {(topic, 0): UNSUPPORTED_VERSION}
    assert client.commit(commit, member_id="nobody", generation_id=member.epoch) == {(topic, 0): UNKNOWN_MEMBER_ID}
    assert client.commit(commit, member_id="member-1", generation_id=member.epoch) == {(topic, 0): 0}

    def fetch(member_id, epoch):
        group = OffsetFetchRequest.OffsetFetchRequestGroup(group_id=client.group_id, member_id=member_id,
                                                           member_epoch=epoch, topics=None)
        return client.client.request(OffsetFetchRequest(groups=[group], require_stable=True), 9,
                                     OffsetFetchResponse).groups[0]
    assert fetch("member-1", member.epoch + 1).error_code == STALE_MEMBER_EPOCH
    found = fetch("member-1", member.epoch)
    assert (found.error_code, [(p.partition_index, p.committed_offset) for t in found.topics
                               for p in t.partitions]) == (0, [(0, 5)])
    assert fetch(None, -1).error_code == 0   # admin tools


def test_a_consumer_group_is_described_and_listed_as_one(group_cluster, client, topic):
    """DescribeGroups (classic) sees no such group; ConsumerGroupDescribe and ListGroups v5 do.
    Classic members joining it, and upgrades, are in tests/engine/coordinator/test_classic_members."""
    ids = topic_ids(client.client, [topic])
    Member(client, "member-1", [topic], ids).heartbeat()
    described = client.describe(version=5)
    assert (described.error_code, described.group_state, described.members) == (0, "Dead", [])
    assert client.describe(version=6).error_code == GROUP_ID_NOT_FOUND
    listed = client.client.request(ListGroupsRequest(states_filter=[], types_filter=["Consumer"]), 5,
                                   ListGroupsResponse)
    mine = [g for g in listed.groups if g.group_id == client.group_id]
    assert [(g.protocol_type, g.group_state, g.group_type) for g in mine] == [("consumer", "Stable", "consumer")]


def test_new_partitions_and_topics_matching_a_regex_bump_the_group_epoch(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    named = Member(client, "by-name", [topic], ids)
    named.heartbeat()
    assert (named.epoch, named.owned) == (1, tps(topic, 0, 1, 2))
    admin = KafkaAdminClient(bootstrap_servers=group_cluster.bootstrap)
    try:
        admin.create_partitions({topic: NewPartitions(total_count=5)})
    finally:
        admin.close()
    wait_until(lambda: named.heartbeat().error_code == 0 and named.owned == tps(topic, 0, 1, 2, 3, 4),
               message="the new partitions assigned")
    assert named.epoch == 2

    pattern = Member(client, "by-regex", [], ids)
    assert pattern.heartbeat(topics=None, regex=f"{topic}-r[0-9]+").error_code == 0
    assert pattern.owned == set()
    create_topic(group_cluster.bootstrap, f"{topic}-r1", 2)
    pattern.ids.update(topic_ids(client.client, [f"{topic}-r1"]))
    pattern.names.update({topic_id: name for name, topic_id in pattern.ids.items()})
    wait_until(lambda: pattern.heartbeat().error_code == 0 and pattern.owned == tps(f"{topic}-r1", 0, 1),
               message="the matching topic assigned")
    assert named.heartbeat().error_code == 0 and named.owned == tps(topic, 0, 1, 2, 3, 4)


def test_regexes_are_re2s_as_kafkas_are(group_cluster, client, topic):
    """RE2, as Kafka's RE2/J: a backreference (which Python's re takes) is INVALID_REGULAR_EXPRESSION,
    and a pattern that backtracks exponentially in Python's re is matched against a topic name made
    for it in linear time, so the coordinator answers (with re, the event loop would hold for ages)."""
    ids = topic_ids(client.client, [topic])
    member = Member(client, "re2-member", [], ids)
    assert member.heartbeat(topics=None, regex=r"(orders)\1").error_code == 128
    create_topic(group_cluster.bootstrap, "a" * 60 + "b", 1)
    assert member.heartbeat(topics=None, regex="(a|aa)+").error_code == 0
    assert member.owned == set()


def test_a_silent_member_is_removed_after_the_session_timeout(engine_factory, topic_name):
    engine = engine_factory(brokers=1, configs={**GROUP_TEST_CONFIGS, "group.consumer.session.timeout.ms": "1000"})
    create_topic(engine.bootstrap, topic_name, 2)
    client = GroupClient(engine, "kip848-session")
    try:
        ids = topic_ids(client.client, [topic_name])
        silent, alive = (Member(client, name, [topic_name], ids) for name in ("silent", "alive"))
        silent.heartbeat()
        alive.heartbeat()
        assert silent.ack().error_code == 0 and len(silent.owned) == 1   # revoked one for "alive"

        def alive_owns_all() -> bool:
            alive.ack()
            return alive.owned == tps(topic_name, 0, 1)
        wait_until(alive_owns_all, message="the silent member's partition handed over")
        assert silent.heartbeat().error_code == UNKNOWN_MEMBER_ID
    finally:
        client.close()


def _group_configs(client: GroupClient) -> dict[str, tuple[str, int]]:
    """DescribeConfigs of the GROUP resource: name -> (value, source)."""
    R = DescribeConfigsRequest
    response = client.client.request(R(resources=[R.DescribeConfigsResource(
        resource_type=32, resource_name=client.group_id, configuration_keys=None)],
        include_synonyms=False, include_documentation=False), 4, DescribeConfigsResponse)
    return {c.name: (c.value, c.config_source) for c in response.results[0].configs}


def test_a_groups_own_session_timeout_and_heartbeat_interval_override_the_brokers(engine_factory, topic_name):
    """consumer.session.timeout.ms and consumer.heartbeat.interval.ms on the GROUP resource, within
    the brokers' group.consumer.min/max.*: sent back to members and used to remove a silent one."""
    # The brokers' session timeout is 5 min: a silent member removed within the wait below was
    # removed by the group's own 1.5 s.
    engine = engine_factory(brokers=1, configs={**GROUP_TEST_CONFIGS, "group.consumer.session.timeout.ms": "300000",
                                                "group.consumer.min.session.timeout.ms": "1000",
                                                "group.consumer.min.heartbeat.interval.ms": "100"})
    create_topic(engine.bootstrap, topic_name, 2)
    client = GroupClient(engine, "kip848-group-configs")
    try:
        assert _group_configs(client)["consumer.session.timeout.ms"] == ("300000", 4)   # STATIC_BROKER_CONFIG
        refused = set_group_configs(engine.bootstrap, client.group_id, {"consumer.session.timeout.ms": "60001"})
        assert "[1000, 60000]" in str(refused), refused
        refused = set_group_configs(engine.bootstrap, client.group_id, {"consumer.heartbeat.interval.ms": "99"})
        assert "[100, 15000]" in str(refused), refused
        set_group_configs(engine.bootstrap, client.group_id, {"consumer.session.timeout.ms": "1500",
                                                               "consumer.heartbeat.interval.ms": "300"})
        wait_until(lambda: _group_configs(client)["consumer.session.timeout.ms"] == ("1500", 8),
                   message="the group's own session timeout described")
        assert _group_configs(client)["consumer.heartbeat.interval.ms"] == ("300", 8)

        ids = topic_ids(client.client, [topic_name])
        silent, alive = (Member(client, name, [topic_name], ids) for name in ("silent", "alive"))
        assert silent.heartbeat().heartbeat_interval_ms == 300      # the broker's is 200
        alive.heartbeat()
        assert silent.ack().error_code == 0 and len(silent.owned) == 1

        def alive_owns_all() -> bool:
            alive.ack()
            return alive.owned == tps(topic_name, 0, 1)
        wait_until(alive_owns_all, timeout=60, message="the silent member removed after the group's timeout")
        assert silent.heartbeat().error_code == UNKNOWN_MEMBER_ID
    finally:
        client.close()


def test_a_member_that_keeps_revoked_partitions_is_removed_after_its_rebalance_timeout(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    stubborn = Member(client, "stubborn", [topic], ids, rebalance_timeout_ms=500)
    stubborn.heartbeat()
    newcomer = Member(client, "newcomer", [topic], ids)
    newcomer.heartbeat()
    assert len(stubborn.heartbeat().assignment.topic_partitions[0].partitions) == 2   # asked to give one up

    def newcomer_gets_all() -> bool:
        assert stubborn.heartbeat(owned=tps(topic, 0, 1, 2)).error_code in (0, UNKNOWN_MEMBER_ID)  # never revokes
        newcomer.ack()
        return newcomer.owned == tps(topic, 0, 1, 2)
    wait_until(newcomer_gets_all, message="the stubborn member removed")
    assert stubborn.heartbeat().error_code == UNKNOWN_MEMBER_ID


def test_offset_delete_and_delete_groups_follow_the_members(group_cluster, client, topic):
    ids = topic_ids(client.client, [topic])
    member = Member(client, "member-1", [topic], ids)
    member.heartbeat()
    assert client.commit({(topic, 0): 3}, member_id="member-1", generation_id=member.epoch) == {(topic, 0): 0}

    def delete_offset():
        request = OffsetDeleteRequest(group_id=client.group_id, topics=[OffsetDeleteRequest.OffsetDeleteRequestTopic(
            name=topic, partitions=[OffsetDeleteRequest.OffsetDeleteRequestTopic.OffsetDeleteRequestPartition(
                partition_index=0)])])
        answer = client.client.request(request, 0, OffsetDeleteResponse)
        return answer.error_code, answer.topics[0].partitions[0].error_code if answer.topics else None

    def delete_group():
        answer = client.client.request(DeleteGroupsRequest(groups_names=[client.group_id]), 2, DeleteGroupsResponse)
        return answer.results[0].error_code
    assert delete_offset() == (0, 86)    # GROUP_SUBSCRIBED_TO_TOPIC: a member reads it
    assert delete_group() == 68          # NON_EMPTY_GROUP
    assert member.heartbeat(epoch=-1).error_code == 0
    assert delete_offset() == (0, 0)
    assert delete_group() == 0
    assert client.describe(version=6).error_code == GROUP_ID_NOT_FOUND
