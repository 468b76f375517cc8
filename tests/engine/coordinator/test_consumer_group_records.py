"""Consumer-protocol groups as __consumer_offsets records (engine/coordinator/consumer_group_records.py)."""
import uuid

from engine.coordinator.consumer_group import ClassicMemberMetadata, ConsumerGroup, ConsumerMember, MemberState
from engine.coordinator.consumer_group_records import diff, group_from_records, records_of, replay

IDS = {"a": uuid.uuid4(), "b": uuid.uuid4()}
NAMES = {topic_id: name for name, topic_id in IDS.items()}
# A member of the classic protocol in the group (KIP-848's mixed groups): its protocols come back.
CLASSIC = ClassicMemberMetadata(10000, (("range", b"\x00\x00"), ("roundrobin", b"\x00\x01")))


def sample_group() -> ConsumerGroup:
    group = ConsumerGroup("g", 0)
    group.group_epoch, group.assignment_epoch = 7, 6
    group.put_member(ConsumerMember("m1", "static-1", "rack", "client", "/127.0.0.1", 300000,
                                    subscribed_topics=frozenset({"a", "b"}), server_assignor="range",
                                    member_epoch=6, previous_member_epoch=5, state=MemberState.UNREVOKED_PARTITIONS,
                                    assigned=frozenset({("a", 0)}), pending_revocation=frozenset({("b", 1)})), 0)
    group.put_member(ConsumerMember("m2", None, None, "other", "/127.0.0.2", 1000, subscribed_regex="a.*",
                                    member_epoch=6, state=MemberState.UNRELEASED_PARTITIONS,
                                    classic=CLASSIC), 0)
    group.target = {"m1": frozenset({("a", 0), ("a", 1)}), "m2": frozenset({("b", 0), ("b", 1)})}
    return group


def test_a_group_reads_back_from_its_records():
    group = sample_group()
    log: dict = {}
    for key, value in records_of(group, IDS.get).items():
        assert replay(key, value, log)
    loaded = group_from_records("g", log["g"], NAMES.get, 0)
    assert (loaded.group_epoch, loaded.assignment_epoch, loaded.target) == (7, 6, group.target)
    assert loaded.members == group.members
    assert (loaded.members["m1"].classic, loaded.members["m2"].classic) == (None, CLASSIC)
    assert loaded.static_member("static-1").member_id == "m1"
    assert loaded.owner_of == {("a", 0): "m1", ("b", 1): "m1"}


def test_only_changes_are_written_and_a_removed_member_gets_tombstones():
    group = sample_group()
    written = records_of(group, IDS.get)
    assert diff(written, records_of(group, IDS.get)) == []
    group.group_epoch += 1
    group.remove_member("m2", 0)
    changes = dict(diff(written, records_of(group, IDS.get)))
    assert sum(value is None for value in changes.values()) == 3      # m2's metadata, target, assignment
    assert sum(value is not None for value in changes.values()) == 1  # the group epoch
    log: dict = {}
    for key, value in list(written.items()) + list(changes.items()):
        replay(key, value, log)
    loaded = group_from_records("g", log["g"], NAMES.get, 0)
    assert (loaded.group_epoch, list(loaded.members)) == (8, ["m1"])


def test_partitions_of_a_deleted_topic_are_dropped_at_load():
    log: dict = {}
    for key, value in records_of(sample_group(), IDS.get).items():
        replay(key, value, log)
    loaded = group_from_records("g", log["g"], {IDS["a"]: "a"}.get, 0)
    assert loaded.members["m1"].pending_revocation == frozenset() and loaded.target["m2"] == frozenset()
