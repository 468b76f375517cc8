"""Share groups spoken with raw requests (kafka-python's codec), so that every step and error
code can be checked exactly: membership, share sessions, acquisition and its modes, each
acknowledgement type, the delivery limit, lock renewal and expiry, and the admin APIs.
The real share consumer drives the same paths in test_share_consumers.py."""
from __future__ import annotations

import urllib.parse
import urllib.request
import uuid

import pytest
from kafka.protocol.admin import DeleteGroupsRequest, DeleteGroupsResponse, ListGroupsRequest, ListGroupsResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from prometheus_client.parser import text_string_to_metric_families

from engine.protocol.specs import (AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse,
                                   ShareGroupDescribeRequest, ShareGroupDescribeResponse)
from engine.tools.broker_command import call
from tests.support.groups import create_topic, produce, set_group_configs
from tests.support.promtool import check_metrics
from tests.support.raw_client import RawClient
from tests.support.share import (ACCEPT, GAP, INVALID_RECORD_STATE, INVALID_SHARE_SESSION_EPOCH, REJECT, RELEASE,
                                 RENEW, SHARE_SESSION_NOT_FOUND, RawShareMember, acquired, coordinator_port,
                                 describe_share_offsets, offsets_of, partition_of)
from tests.support.waiting import wait_until

NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, INVALID_REQUEST, INVALID_CONFIG = 68, 69, 42, 40


@pytest.fixture
def queue(share_engine, request):
    """A fresh 1-partition topic with 10 records and a share group reading it from the start."""
    name = f"q-{request.node.name[:60]}-{uuid.uuid4().hex[:6]}"
    create_topic(share_engine.bootstrap, name, 1)
    produce(share_engine.bootstrap, name, [f"r{i}".encode() for i in range(10)])
    group = f"g-{name}"
    assert set_group_configs(share_engine.bootstrap, group, {"share.auto.offset.reset": "earliest"}) \
        == {"group": {group: "OK"}}
    return name, group


def member(engine, queue, member_id="m1") -> RawShareMember:
    topic, group = queue
    joined = RawShareMember(engine.ports[0], group, topic, member_id)
    joined.join()
    return joined


def test_a_member_joins_gets_the_partition_and_acquires_batches_with_a_delivery_count(share_engine, queue):
    m = member(share_engine, queue)
    try:
        assert m.assignment == [0] and m.member_epoch == 1
        first = m.fetch()
        assert first.error_code == 0 and first.acquisition_lock_timeout_ms == 30000
        assert acquired(first) == [(0, 9, 1)]
        assert len(partition_of(first).records) > 0
        # Nothing more to acquire: the next fetch waits, then answers no records.
        assert offsets_of(m.fetch(acks=[(0, 9, [ACCEPT])], max_wait_ms=100)) == []
    finally:
        m.close()
    offsets = describe_share_offsets(share_engine.ports[0], queue[1])
    [row] = offsets.topics[0].partitions
    assert (row.start_offset, row.lag) == (10, 0)


def test_record_limit_acquires_exactly_the_count_and_batch_mode_whole_batches(share_engine, queue):
    m = member(share_engine, queue)
    try:
        assert offsets_of(m.fetch(max_records=3, mode=1)) == [0, 1, 2]
        # Batch-optimized: whole batches, so more than asked (the 10 records are one batch here).
        assert offsets_of(m.fetch(max_records=2, mode=0)) == list(range(3, 10))
    finally:
        m.close()


def test_release_brings_a_record_back_reject_archives_and_gap_counts_as_done(share_engine, queue):
    m = member(share_engine, queue)
    try:
        assert offsets_of(m.fetch()) == list(range(10))
        answer = m.fetch(acks=[(0, 0, [RELEASE]), (1, 1, [REJECT]), (2, 2, [GAP]), (3, 9, [ACCEPT])])
        assert partition_of(answer).acknowledge_error_code == 0
        assert acquired(answer) == [(0, 0, 2)]                  # released: delivered again, second time
        m.fetch(acks=[(0, 0, [ACCEPT])], max_wait_ms=100)
    finally:
        m.close()
    [row] = describe_share_offsets(share_engine.ports[0], queue[1]).topics[0].partitions
    assert (row.start_offset, row.lag) == (10, 0)


def test_a_record_released_up_to_the_delivery_limit_is_archived(share_engine, queue):
    topic, group = queue
    set_group_configs(share_engine.bootstrap, group, {"share.delivery.count.limit": "2"})
    m = member(share_engine, queue)
    try:
        assert acquired(m.fetch(max_records=1, mode=1)) == [(0, 0, 1)]
        assert acquired(m.fetch(acks=[(0, 0, [RELEASE])], max_records=1, mode=1)) == [(0, 0, 2)]
        # The second release reaches the limit: archived, never delivered again.
        after = m.fetch(acks=[(0, 0, [RELEASE])], max_records=1, mode=1)
        assert acquired(after) == [(1, 1, 1)]
    finally:
        m.close()


def test_acknowledging_a_record_the_member_does_not_hold_changes_nothing(share_engine, queue):
    m1, m2 = member(share_engine, queue, "m1"), member(share_engine, queue, "m2")
    try:
        assert offsets_of(m1.fetch(max_records=5, mode=1)) == [0, 1, 2, 3, 4]
        m2.fetch(max_wait_ms=0)                      # opens m2's session
        # m2 acknowledges records m1 holds, and one nobody holds: all or nothing.
        answer = m2.acknowledge([(0, 1, [ACCEPT]), (7, 7, [ACCEPT])])
        assert partition_of(answer).error_code == INVALID_RECORD_STATE
        # m1 still holds 0-4 and can accept them.
        assert partition_of(m1.acknowledge([(0, 4, [ACCEPT])])).error_code == 0
    finally:
        m1.close()
        m2.close()


@pytest.mark.parametrize("acks, error", [
    ([(0, 5, [ACCEPT]), (3, 7, [RELEASE])], INVALID_REQUEST),      # overlapping
    ([(5, 9, [ACCEPT]), (0, 4, [ACCEPT])], INVALID_REQUEST),       # out of order
    ([(0, 4, [ACCEPT]), (0, 4, [ACCEPT])], INVALID_REQUEST),       # twice
    ([(0, 4, [ACCEPT]), (4, 9, [RELEASE])], INVALID_RECORD_STATE),  # offset 4 named twice
])
def test_acknowledgement_batches_out_of_order_or_overlapping_change_nothing(share_engine, queue, acks, error):
    m = member(share_engine, queue)
    try:
        assert offsets_of(m.fetch()) == list(range(10))
        assert partition_of(m.acknowledge(acks)).error_code == error
        assert partition_of(m.fetch(acks=acks, max_wait_ms=0)).acknowledge_error_code == error
        # Nothing changed: the member still holds every record, each delivered once.
        assert partition_of(m.acknowledge([(0, 9, [ACCEPT])])).error_code == 0
    finally:
        m.close()
    [row] = describe_share_offsets(share_engine.ports[0], queue[1]).topics[0].partitions
    assert (row.start_offset, row.lag) == (10, 0)


def test_an_expired_lock_makes_the_records_available_to_another_member(share_engine, queue):
    topic, group = queue
    set_group_configs(share_engine.bootstrap, group, {"share.record.lock.duration.ms": "1000"})
    m1, m2 = member(share_engine, queue, "m1"), member(share_engine, queue, "m2")
    try:
        first = m1.fetch(max_records=4, mode=1)
        assert first.acquisition_lock_timeout_ms == 1000 and offsets_of(first) == [0, 1, 2, 3]
        assert offsets_of(m2.fetch()) == [4, 5, 6, 7, 8, 9]
        m2.acknowledge([(4, 9, [ACCEPT])])
        got = wait_until(lambda: acquired(m2.fetch(max_records=4, mode=1, max_wait_ms=500)), timeout=20,
                         message="the expired records to come back")
        assert got == [(0, 3, 2)]                     # delivered a second time, to the other member
        late = m1.acknowledge([(0, 3, [ACCEPT])])      # the first holder's lock is gone
        assert partition_of(late).error_code == INVALID_RECORD_STATE
    finally:
        m1.close()
        m2.close()


def test_renew_extends_a_lock_past_its_duration(share_engine, queue):
    topic, group = queue
    set_group_configs(share_engine.bootstrap, group, {"share.record.lock.duration.ms": "1500"})
    m1, m2 = member(share_engine, queue, "m1"), member(share_engine, queue, "m2")
    try:
        assert offsets_of(m1.fetch(max_records=2, mode=1)) == [0, 1]
        m2.fetch(max_wait_ms=0, max_records=0, mode=-1)         # ShareAcquireMode 255 (renew): a session, acquiring nothing
        # Renew every half lock for three lock durations: m2 never gets 0-1, only 2 on.
        for _ in range(9):
            renewed = m1.acknowledge([(0, 1, [RENEW])])
            assert renewed.acquisition_lock_timeout_ms == 1500 and partition_of(renewed).error_code == 0
            taken = offsets_of(m2.fetch(max_records=100, mode=1, max_wait_ms=500))
            assert not {0, 1} & set(taken)
        assert partition_of(m1.acknowledge([(0, 1, [ACCEPT])])).error_code == 0
    finally:
        m1.close()
        m2.close()


def test_share_sessions_check_their_epochs(share_engine, queue):
    m = member(share_engine, queue)
    try:
        assert m.fetch(epoch=3).error_code == SHARE_SESSION_NOT_FOUND
        assert m.fetch(max_wait_ms=0).error_code == 0                   # epoch 0 opens it
        assert m.fetch(epoch=5, max_wait_ms=0).error_code == INVALID_SHARE_SESSION_EPOCH
        assert m.fetch(max_wait_ms=0).error_code == 0                   # epoch 1
        # Acknowledgements cannot open a session.
        assert m.fetch(acks=[(0, 0, [ACCEPT])], epoch=0).error_code == INVALID_REQUEST
        # Closing (-1) releases what the member holds, at once.
        m.session_epoch = 0
        assert offsets_of(m.fetch()) == list(range(10))
        assert m.acknowledge([(0, 4, [ACCEPT])], epoch=-1).error_code == 0
        other = member(share_engine, queue, "m2")
        try:
            assert offsets_of(other.fetch()) == [5, 6, 7, 8, 9]
        finally:
            other.close()
    finally:
        m.close()


def test_share_groups_are_listed_by_type_described_and_deleted_when_empty(share_engine, queue):
    topic, group = queue
    m = member(share_engine, queue)
    port = coordinator_port(share_engine.ports[0], group)
    client = RawClient(port)
    try:
        listed = client.request(ListGroupsRequest(states_filter=[], types_filter=["share"]), 5, ListGroupsResponse)
        mine = [g for g in listed.groups if g.group_id == group]
        assert [(g.group_type, g.group_state, g.protocol_type) for g in mine] == [("share", "Stable", "share")]
        classic = client.request(ListGroupsRequest(states_filter=[], types_filter=["classic"]), 5, ListGroupsResponse)
        assert group not in {g.group_id for g in classic.groups}
        described = client.request(ShareGroupDescribeRequest(group_ids=[group, "nope"],
                                                             include_authorized_operations=False),
                                   1, ShareGroupDescribeResponse)
        ours, unknown = described.groups
        assert (ours.group_state, ours.assignor_name, [mm.member_id for mm in ours.members]) == ("Stable", "simple",
                                                                                                    ["m1"])
        assert ours.members[0].assignment.topic_partitions[0].topic_name == topic
        assert unknown.error_code == GROUP_ID_NOT_FOUND
        delete = client.request(DeleteGroupsRequest(groups_names=[group]), 2, DeleteGroupsResponse)
        assert delete.results[0].error_code == NON_EMPTY_GROUP
        assert m.heartbeat(epoch=-1).error_code == 0
        delete = client.request(DeleteGroupsRequest(groups_names=[group]), 2, DeleteGroupsResponse)
        assert delete.results[0].error_code == 0
        gone = client.request(ShareGroupDescribeRequest(group_ids=[group], include_authorized_operations=False),
                              1, ShareGroupDescribeResponse)
        assert gone.groups[0].error_code == GROUP_ID_NOT_FOUND
    finally:
        client.close()
        m.close()


def test_alter_offsets_needs_an_empty_group_and_moves_its_start(share_engine, queue):
    topic, group = queue
    m = member(share_engine, queue)
    client = RawClient(coordinator_port(share_engine.ports[0], group))
    R = AlterShareGroupOffsetsRequest
    request = R(group_id=group, topics=[R.AlterShareGroupOffsetsRequestTopic(
        topic_name=topic, partitions=[R.AlterShareGroupOffsetsRequestTopic.AlterShareGroupOffsetsRequestPartition(
            partition_index=0, start_offset=7)])])
    try:
        assert offsets_of(m.fetch()) == list(range(10))
        assert client.request(request, 0, AlterShareGroupOffsetsResponse).error_code == NON_EMPTY_GROUP
        m.fetch(acks=[(0, 9, [ACCEPT])], epoch=-1)
        m.heartbeat(epoch=-1)
        answer = client.request(request, 0, AlterShareGroupOffsetsResponse)
        assert answer.error_code == 0 and answer.responses[0].partitions[0].error_code == 0
        [row] = describe_share_offsets(share_engine.ports[0], group).topics[0].partitions
        assert (row.start_offset, row.lag) == (7, 3)
        again = RawShareMember(share_engine.ports[0], group, topic, "m2")
        try:
            again.join()
            assert offsets_of(again.fetch()) == [7, 8, 9]     # the old state was replaced
        finally:
            again.close()
    finally:
        client.close()
        m.close()


def test_group_configs_are_checked_and_share_version_is_finalized(share_engine, queue):
    topic, group = queue
    bad = set_group_configs(share_engine.bootstrap, group, {"share.record.lock.duration.ms": "999999"})
    assert "INVALID_CONFIG" in str(bad["group"][group]).upper() or "InvalidConfig" in str(bad["group"][group])
    client = RawClient(share_engine.ports[0])
    try:
        versions = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 4,
                                  ApiVersionsResponse)
    finally:
        client.close()
    assert [(f.name, f.min_version_level, f.max_version_level) for f in versions.finalized_features] == \
        [("share.version", 1, 1)]
    ranges = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
    assert ranges[76] == (1, 1) and ranges[78] == (1, 2) and ranges[79] == (1, 2) and ranges[90] == (0, 1)


def test_the_admin_interface_tells_each_share_partitions_records_in_flight(share_engine, queue):
    topic, group = queue
    m = member(share_engine, queue)
    try:
        assert offsets_of(m.fetch(max_records=4, mode=1)) == [0, 1, 2, 3]
        m.acknowledge([(0, 0, [ACCEPT]), (1, 1, [REJECT])])
        [row] = call(share_engine.admin_url, "GET", "/share-partitions?" + urllib.parse.urlencode({"group": group}),
                     share_engine.admin_token)
        assert (row["topic"], row["start_offset"], row["end_offset"], row["acquired"], row["in_flight"]) == \
            (topic, 2, 3, 2, 2)
        assert (row["deliveries"], row["archived_total"]["rejected"], row["lock_expiries_total"]) == (4, 1, 0)
        everyone = call(share_engine.admin_url, "GET", "/share-partitions", share_engine.admin_token)
        assert group in {r["group"] for r in everyone}
        with pytest.raises(RuntimeError, match="X-Engine-Admin-Token"):
            call(share_engine.admin_url, "GET", "/share-partitions", "wrong-token")

        # The same counts on /metrics, for Prometheus.
        with urllib.request.urlopen(f"http://127.0.0.1:{share_engine.metrics_port}/metrics", timeout=10) as answer:
            exposition = answer.read()
        checked = check_metrics(exposition)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        mine = {(s.name, s.labels.get("cause")): s.value
                for family in text_string_to_metric_families(exposition.decode()) for s in family.samples
                if s.name.startswith("kafka_server_sharepartitionmetrics_")
                and (s.labels["group"], s.labels["topic"], s.labels["partition"]) == (group, topic, "0")}
        assert mine == {("kafka_server_sharepartitionmetrics_inflightmessagecount", None): 2,
                        ("kafka_server_sharepartitionmetrics_acquiredmessagecount", None): 2,
                        ("kafka_server_sharepartitionmetrics_acquisitionlocktimeouts_total", None): 0,
                        ("kafka_server_sharepartitionmetrics_archivedmessages_total", "rejected"): 1,
                        # every cause from zero on, so that rate() has a start
                        ("kafka_server_sharepartitionmetrics_archivedmessages_total", "delivery_limit"): 0,
                        ("kafka_server_sharepartitionmetrics_archivedmessages_total", "gap"): 0,
                        ("kafka_server_sharepartitionmetrics_archivedmessages_total", "aborted"): 0}
    finally:
        m.close()


def test_a_share_session_ends_with_its_connection_and_its_records_come_back_at_once(share_engine, queue):
    topic, group = queue
    # Neither the lock (60 s) nor the session's idleness (60 s) can release them within the wait.
    set_group_configs(share_engine.bootstrap, group, {"share.record.lock.duration.ms": "60000",
                                                     "share.session.timeout.ms": "60000"})
    m1, m2 = member(share_engine, queue, "m1"), member(share_engine, queue, "m2")
    try:
        assert offsets_of(m1.fetch(max_records=10, mode=1)) == list(range(10))
        m2.fetch(max_wait_ms=0, max_records=0, mode=-1)         # m2's session, acquiring nothing yet
        m1.leader.close()
        got = wait_until(lambda: acquired(m2.fetch(max_records=10, mode=1, max_wait_ms=500)), timeout=20,
                         message="the closed connection's records to come back")
        assert got == [(0, 9, 2)]
    finally:
        m1.close()
        m2.close()
