"""The group APIs at the wire level: the rebalance handshake, generation fencing and Kafka's
error codes for bad input, after which the group must still be healthy."""
from __future__ import annotations

import random

import kafka.errors as Errors
from kafka.protocol.consumer import (HeartbeatRequest, HeartbeatResponse, OffsetCommitRequest, OffsetCommitResponse,
                                     OffsetFetchRequest, OffsetFetchResponse)
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from tests.support.groups import GroupClient, assignment, create_topic, subscription
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

NONE = 0


def stable_member(client: GroupClient, topic: str, **join):
    """Join alone and sync an assignment of partition 0: (member id, generation)."""
    joined = client.join_as_new_member(protocols=[("range", subscription([topic]))], **join)
    assert joined.error_code == NONE, joined
    assert joined.leader == joined.member_id and [m.member_id for m in joined.members] == [joined.member_id]
    synced = client.sync(joined.member_id, joined.generation_id, {joined.member_id: assignment({topic: [0]})},
                         instance_id=join.get("instance_id"))
    assert synced.error_code == NONE
    return joined.member_id, joined.generation_id


def test_join_sync_heartbeat_commit_leave(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 2)
    client = GroupClient(group_cluster, group_id)
    try:
        first = client.join()
        assert first.error_code == Errors.MemberIdRequiredError.errno and first.member_id  # KIP-394
        member, generation = stable_member(client, topic_name)
        assert generation == 1
        assert client.heartbeat(member, generation) == NONE
        assert client.commit({(topic_name, 0): 7, (topic_name, 1): 3}, member_id=member,
                             generation_id=generation) == {(topic_name, 0): NONE, (topic_name, 1): NONE}
        assert client.fetch([(topic_name, 0), (topic_name, 1)]) == (NONE, {(topic_name, 0): 7, (topic_name, 1): 3})
        described = client.describe()
        assert (described.group_state, described.protocol_type, described.protocol_data) == ("Stable", "consumer",
                                                                                            "range")
        [m] = described.members
        assert m.member_id == member and m.client_id == "raw-test" and m.client_host == "/127.0.0.1"
        assert ConsumerProtocolAssignment.decode(m.member_assignment).partitions()[0].partition == 0
        left = client.leave(member)
        assert left.error_code == NONE and [x.error_code for x in left.members] == [NONE]
        assert client.describe().group_state == "Empty"
        assert client.fetch([(topic_name, 0)]) == (NONE, {(topic_name, 0): 7})  # offsets outlive membership
    finally:
        client.close()


def test_commit_with_an_old_generation_is_fenced(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 1)
    client = GroupClient(group_cluster, group_id)
    try:
        member, generation = stable_member(client, topic_name)
        assert client.commit({(topic_name, 0): 5}, member_id=member, generation_id=generation - 1) == \
            {(topic_name, 0): Errors.IllegalGenerationError.errno}
        assert client.commit({(topic_name, 0): 5}, member_id="zombie", generation_id=generation) == \
            {(topic_name, 0): Errors.UnknownMemberIdError.errno}
        assert client.fetch([(topic_name, 0)]) == (NONE, {(topic_name, 0): -1})  # nothing was stored
        # The group is unharmed: the real member goes on.
        assert client.heartbeat(member, generation) == NONE
        assert client.commit({(topic_name, 0): 5}, member_id=member, generation_id=generation) == \
            {(topic_name, 0): NONE}
        assert client.describe().group_state == "Stable"
    finally:
        client.close()


def test_a_partition_named_twice_in_a_commit_gets_an_answer_per_entry(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 1)
    client = GroupClient(group_cluster, group_id)
    too_large = "m" * 5000    # beyond offset.metadata.max.bytes (4096)
    P = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition

    def commit(*entries):
        request = OffsetCommitRequest(
            group_id=group_id, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
            retention_time_ms=-1, topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=topic_name, partitions=[
                P(partition_index=0, committed_offset=o, committed_leader_epoch=-1, committed_metadata=m)
                for o, m in entries])])
        [topic] = client.client.request(request, 9, OffsetCommitResponse).topics
        return [p.error_code for p in topic.partitions]
    try:   # as Kafka: each entry is checked alone, and the last valid one is stored
        assert commit((5, ""), (6, too_large)) == [NONE, Errors.OffsetMetadataTooLargeError.errno]
        assert client.fetch([(topic_name, 0)]) == (NONE, {(topic_name, 0): 5})
        assert commit((7, too_large), (8, "")) == [Errors.OffsetMetadataTooLargeError.errno, NONE]
        assert client.fetch([(topic_name, 0)]) == (NONE, {(topic_name, 0): 8})
        # the limit counts Java's String.length(), UTF-16 units, as Kafka: 4096 of them, 12,288
        # bytes in UTF-8, are taken; one emoji (2 units) past it is not
        assert commit((9, "€" * 4096), (10, "€" * 4095 + "😀")) == \
            [NONE, Errors.OffsetMetadataTooLargeError.errno]
        assert client.fetch([(topic_name, 0)]) == (NONE, {(topic_name, 0): 9})
    finally:
        client.close()


def test_offsets_are_committed_and_fetched_by_partition_index_in_any_order(group_cluster, group_id, topic_name):
    """Partitions named in any order (a topic split over two entries, a partition fetched
    twice) are stored and answered under their own index, in the request's order: a client
    resumes each partition at its own offset."""
    create_topic(group_cluster.bootstrap, topic_name, 5)
    client = GroupClient(group_cluster, group_id)
    CT, FT = OffsetCommitRequest.OffsetCommitRequestTopic, OffsetFetchRequest.OffsetFetchRequestTopic
    rng, stored = random.Random(848), {}

    def answered(topics):
        return [(p.partition_index, p.committed_offset, p.metadata, p.error_code) for t in topics for p in t.partitions]

    def expected(asked):
        return [(p, stored.get(p, -1), f"p{p}" if p in stored else "", NONE) for p in asked]
    try:
        for _ in range(20):
            order = rng.sample(range(5), rng.randint(1, 5))
            offsets = {p: rng.randrange(10**9) for p in order}
            split = rng.randint(0, len(order))
            request = OffsetCommitRequest(
                group_id=group_id, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                retention_time_ms=-1, topics=[CT(name=topic_name, partitions=[CT.OffsetCommitRequestPartition(
                    partition_index=p, committed_offset=offsets[p], committed_leader_epoch=-1,
                    committed_metadata=f"p{p}") for p in part]) for part in (order[:split], order[split:])])
            committed = client.client.request(request, rng.choice([2, 6, 9]), OffsetCommitResponse).topics
            assert [(p.partition_index, p.error_code) for t in committed for p in t.partitions] == \
                [(p, NONE) for p in order]
            stored.update(offsets)
            asked = rng.sample(range(5), 5) + [rng.randrange(5)]
            old = client.client.request(OffsetFetchRequest(group_id=group_id, topics=[FT(
                name=topic_name, partition_indexes=asked)], require_stable=True), 7, OffsetFetchResponse)
            assert answered(old.topics) == expected(asked)
            other = rng.sample(range(5), 3)      # v8+: the same group twice, in two orders
            many = client.client.request(OffsetFetchRequest(groups=[OffsetFetchRequest.OffsetFetchRequestGroup(
                group_id=group_id, member_id=None, member_epoch=-1, topics=[FT(name=topic_name, partition_indexes=a)])
                for a in (asked, other)], require_stable=True), 9, OffsetFetchResponse)
            assert [answered(g.topics) for g in many.groups] == [expected(asked), expected(other)]
    finally:
        client.close()


def test_join_with_an_unknown_protocol_type_is_inconsistent(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 1)
    client = GroupClient(group_cluster, group_id)
    try:
        member, generation = stable_member(client, topic_name)
        other = client.join_as_new_member(protocol_type="not-a-consumer", protocols=[("some-protocol", b"x")])
        assert other.error_code == Errors.InconsistentGroupProtocolError.errno
        mismatch = client.join_as_new_member(protocols=[("roundrobin", subscription([topic_name]))])
        assert mismatch.error_code == Errors.InconsistentGroupProtocolError.errno  # no common protocol
        assert client.heartbeat(member, generation) == NONE
        assert [m.member_id for m in client.describe().members] == [member]
    finally:
        client.close()
    empty = GroupClient(group_cluster, group_id + "-empty")
    try:  # an empty group accepts any type, but not an empty one or no protocols
        assert empty.join(protocol_type="", protocols=[("p", b"")]).error_code == \
            Errors.InconsistentGroupProtocolError.errno
    finally:
        empty.close()


def test_heartbeat_from_an_unknown_member(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 1)
    client = GroupClient(group_cluster, group_id)
    try:
        assert client.heartbeat("nobody", 0) == Errors.UnknownMemberIdError.errno  # no such group yet
        member, generation = stable_member(client, topic_name)
        assert client.heartbeat("nobody", generation) == Errors.UnknownMemberIdError.errno
        assert client.heartbeat(member, generation + 1) == Errors.IllegalGenerationError.errno
        assert client.sync("nobody", generation).error_code == Errors.UnknownMemberIdError.errno
        assert client.join("nobody").error_code == Errors.UnknownMemberIdError.errno
        assert client.heartbeat(member, generation) == NONE
        assert client.describe().group_state == "Stable"
    finally:
        client.close()


def test_a_second_member_triggers_a_rebalance(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 2)
    first, second = GroupClient(group_cluster, group_id), GroupClient(group_cluster, group_id)
    protocols = [("range", subscription([topic_name]))]
    try:
        member_a, generation = stable_member(first, topic_name)
        member_b = second.join(protocols=protocols).member_id  # MEMBER_ID_REQUIRED
        join_b = second.begin("join", member_b, protocols=protocols)  # waits for the rebalance
        # The second join is sent from another thread: once it reaches the coordinator, the
        # first member's heartbeats say a rebalance is in progress (until then they say NONE).
        answers = []
        wait_until(lambda: answers.append(first.heartbeat(member_a, generation)) or answers[-1] != NONE,
                   message="a heartbeat answered during the rebalance")
        assert answers[-1] == Errors.RebalanceInProgressError.errno
        rejoined = first.join(member_a, protocols=protocols)
        joined_b = join_b()
        assert rejoined.error_code == joined_b.error_code == NONE
        assert rejoined.generation_id == joined_b.generation_id == generation + 1
        assert rejoined.leader == joined_b.leader == member_a
        assert {m.member_id for m in rejoined.members} == {member_a, member_b} and joined_b.members == []
        new_generation = rejoined.generation_id
        # Until the leader's assignment is in, commits wait for the rebalance to finish.
        assert first.commit({(topic_name, 0): 1}, member_id=member_a, generation_id=new_generation) == \
            {(topic_name, 0): Errors.RebalanceInProgressError.errno}
        sync_b = second.begin("sync", member_b, new_generation)
        synced_a = first.sync(member_a, new_generation, {member_a: assignment({topic_name: [0]}),
                                                         member_b: assignment({topic_name: [1]})})
        synced_b = sync_b()
        assert ConsumerProtocolAssignment.decode(synced_a.assignment).partitions()[0].partition == 0
        assert ConsumerProtocolAssignment.decode(synced_b.assignment).partitions()[0].partition == 1
        # The old generation is fenced, the new one commits.
        assert first.commit({(topic_name, 0): 1}, member_id=member_a, generation_id=generation) == \
            {(topic_name, 0): Errors.IllegalGenerationError.errno}
        assert second.commit({(topic_name, 1): 4}, member_id=member_b, generation_id=new_generation) == \
            {(topic_name, 1): NONE}
    finally:
        first.close()
        second.close()


def test_find_coordinator_single_and_batched(group_cluster, group_id):
    raw = RawClient(group_cluster.ports[0])
    try:
        single = raw.request(FindCoordinatorRequest(key=group_id, key_type=0), 3, FindCoordinatorResponse)
        batch = raw.request(FindCoordinatorRequest(key_type=0, coordinator_keys=[group_id, group_id + "x", ""]), 4,
                            FindCoordinatorResponse)
        v0 = raw.request(FindCoordinatorRequest(key=group_id), 0, FindCoordinatorResponse)
    finally:
        raw.close()
    assert single.error_code == NONE and single.port in group_cluster.ports
    assert (v0.node_id, v0.port) == (single.node_id, single.port)
    [mine, other, empty] = batch.coordinators
    assert (mine.key, mine.node_id, mine.error_code) == (group_id, single.node_id, NONE)
    assert other.error_code == NONE and other.node_id in range(3)
    assert empty.error_code == Errors.InvalidGroupIdError.errno
    # Any other broker is not the coordinator.
    wrong = next(p for i, p in enumerate(group_cluster.ports) if i != single.node_id)
    client = RawClient(wrong)
    try:
        answer = client.request(HeartbeatRequest(group_id=group_id, generation_id=1, member_id="m",
                                                 group_instance_id=None), 4, HeartbeatResponse)
    finally:
        client.close()
    assert answer.error_code == Errors.NotCoordinatorError.errno
