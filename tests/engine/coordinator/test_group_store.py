"""Offsets and groups in `__consumer_offsets`: commits and their fencing, reloading from the
log, deletion, expiry after offsets.retention.minutes, and losing the partition."""
from __future__ import annotations

import asyncio
import uuid

import kafka.errors as Errors
import pytest
from kafka.record.util import calc_crc32c

from engine.cluster import slices
from engine.cluster.metadata import PartitionState, TopicState
from engine.coordinator.consumer_protocol import HeartbeatRequest
from engine.coordinator.group import GroupState
from engine.coordinator.group_store import OFFSETS_TOPIC
from engine.coordinator.membership import now_ms
from engine.coordinator.offsets_records import OffsetAndMetadata, build_batch, offset_key
from engine.errors import ApiError
from tests.support.groups import subscription

from .test_membership import eventually, join, sync

DAY_MS = 24 * 3600 * 1000


def commit(coordinator, offsets, *, group="g", member_id="", generation=-1, timestamp=None, expire=-1, version=9):
    stamped = {tp: OffsetAndMetadata(offset, -1, "meta", now_ms() if timestamp is None else timestamp, expire)
               for tp, offset in offsets.items()}
    return coordinator.commit_offsets(group_id=group, member_id=member_id, group_instance_id=None,
                                      generation_id=generation, offsets=stamped, api_version=version)


def fetched(coordinator, group="g"):
    return {tp: o.offset for tp, o in coordinator.fetch_offsets(group, None)}


def test_commits_and_group_metadata_reload_from_the_log(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        await commit(coordinator, {("t", 0): 5, ("t", 1): 6}, group="standalone")
        joined = await join(coordinator, protocols=[("range", subscription(["t"]))])
        await sync(coordinator, joined.member_id, joined.generation_id, {joined.member_id: b"assigned"})
        await commit(coordinator, {("t", 0): 9}, member_id=joined.member_id, generation=joined.generation_id)
        await commit(coordinator, {("t", 1): 7}, group="standalone")  # the later value wins on reload

        reloaded = make_coordinator()
        assert fetched(reloaded, "standalone") == {("t", 0): 5, ("t", 1): 7}
        assert fetched(reloaded) == {("t", 0): 9}
        group = reloaded.store.get("g")
        assert group.is_(GroupState.STABLE) and group.generation_id == joined.generation_id
        assert group.protocol_type == "consumer" and group.protocol_name == "range"
        member = group.members[joined.member_id]
        assert (member.assignment, member.client_id, member.client_host) == (b"assigned", "client", "/127.0.0.1")
        assert group.subscribed_topics() == {"t"}
        assert reloaded.fetch_offsets("g", [("t", 0), ("t", 5)])[1] == (("t", 5), None)
    asyncio.run(scenario())


def test_commit_fencing(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        for version, error in [(8, Errors.IllegalGenerationError), (9, Errors.GroupIdNotFoundError)]:
            with pytest.raises(ApiError) as unknown_group:  # a member of a group this coordinator never had
                await commit(coordinator, {("t", 0): 1}, group="fresh", member_id="m", generation=3, version=version)
            assert unknown_group.value.code == error.errno   # as Kafka: v9 names the group missing
        joined = await join(coordinator)
        await sync(coordinator, joined.member_id, 1, {joined.member_id: b""})
        for member_id, generation, error in [(joined.member_id, 0, Errors.IllegalGenerationError),
                                             ("other", 1, Errors.UnknownMemberIdError),
                                             ("", -1, Errors.UnknownMemberIdError)]:  # standalone on a live group
            with pytest.raises(ApiError) as refused:
                await commit(coordinator, {("t", 0): 1}, member_id=member_id, generation=generation)
            assert refused.value.code == error.errno
        assert fetched(coordinator) == {}
    asyncio.run(scenario())


def test_offset_delete_and_group_delete_write_tombstones(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        await commit(coordinator, {("a", 0): 1, ("b", 0): 2})
        assert await coordinator.delete_offsets("g", [("a", 0), ("c", 0)]) == {("a", 0): 0, ("c", 0): 0}
        assert await coordinator.delete_groups(["g", "missing"]) == {
            "g": 0, "missing": Errors.GroupIdNotFoundError.errno}
        joined = await join(coordinator, group="busy", protocols=[("range", subscription(["a"]))])
        await sync(coordinator, joined.member_id, 1, {joined.member_id: b""}, group="busy")
        await commit(coordinator, {("a", 0): 4, ("b", 0): 5}, group="busy", member_id=joined.member_id,
                     generation=1)
        assert await coordinator.delete_groups(["busy"]) == {"busy": Errors.NonEmptyGroupError.errno}
        assert await coordinator.delete_offsets("busy", [("a", 0), ("b", 0)]) == {
            ("a", 0): Errors.GroupSubscribedToTopicError.errno, ("b", 0): 0}

        reloaded = make_coordinator()
        assert reloaded.store.get("g") is None and reloaded.describe_group("g") is None
        assert fetched(reloaded, "busy") == {("a", 0): 4}
    asyncio.run(scenario())


def test_deleting_a_group_whose_tombstones_exceed_a_batch_and_a_failed_delete(make_coordinator):
    topic = "t" * 249   # 4000 offsets of this topic: their tombstones take about 1.2 MB
    offsets = {(topic, p): p for p in range(4000)}

    async def scenario():
        coordinator = make_coordinator()
        for lo in range(0, 4000, 1000):
            await commit(coordinator, {tp: o for tp, o in offsets.items() if lo <= tp[1] < lo + 1000}, group="wide")
            await commit(coordinator, {tp: o for tp, o in offsets.items() if lo <= tp[1] < lo + 1000}, group="kept")
        partition = coordinator._broker.partitions[(OFFSETS_TOPIC, 0)]
        partition.is_leader = False    # the tombstones cannot be written: the group stays as it was
        assert await coordinator.delete_groups(["kept"]) == {"kept": Errors.NotCoordinatorError.errno}
        partition.is_leader = True
        assert coordinator.describe_group("kept").is_(GroupState.EMPTY) and fetched(coordinator, "kept") == offsets
        assert await coordinator.delete_groups(["wide"]) == {"wide": 0}
        assert await coordinator.delete_offsets("kept", list(offsets)) == dict.fromkeys(offsets, 0)

        reloaded = make_coordinator()
        assert reloaded.describe_group("wide") is None and fetched(reloaded, "wide") == {}
        assert fetched(reloaded, "kept") == {}
    asyncio.run(scenario())


def test_offsets_expire_after_the_retention(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        store, now = coordinator.store, now_ms()
        await commit(coordinator, {("t", 0): 1}, group="old-standalone", timestamp=now - 8 * DAY_MS)
        await commit(coordinator, {("t", 0): 2}, group="new-standalone", timestamp=now - DAY_MS)
        await commit(coordinator, {("t", 0): 3}, group="retained", timestamp=now, expire=now - 1)  # v2-4 retention
        joined = await join(coordinator, group="live", protocols=[("range", subscription(["sub"]))])
        await sync(coordinator, joined.member_id, 1, {joined.member_id: b""}, group="live")
        for topic in ("sub", "gone"):  # KIP-496: offsets of topics no member subscribes to expire
            await commit(coordinator, {(topic, 0): 4}, group="live", member_id=joined.member_id, generation=1,
                         timestamp=now - 8 * DAY_MS)
        assert await store.expire_offsets(now, 7 * DAY_MS) == 3
        assert store.get("old-standalone") is None and store.get("retained") is None  # emptied: deleted
        assert fetched(coordinator, "new-standalone") == {("t", 0): 2}
        assert fetched(coordinator, "live") == {("sub", 0): 4}

        # An Empty consumer group's offsets expire a retention after it became empty.
        assert coordinator.leave_group("live", [(joined.member_id, None)]) == (0, [0])
        group = store.get("live")
        assert group.is_(GroupState.EMPTY)
        assert await store.expire_offsets(group.state_timestamp + DAY_MS, 7 * DAY_MS) == 0
        await eventually(lambda: coordinator.membership.writes_in_flight == 0)  # the Empty group's record
        reloaded = make_coordinator()
        assert sorted(g.group_id for g in reloaded.list_groups()) == ["live", "new-standalone"]
        assert await reloaded.store.expire_offsets(group.state_timestamp + 7 * DAY_MS, 7 * DAY_MS) == 2
        assert reloaded.list_groups() == []
        assert make_coordinator().list_groups() == []  # the tombstones were written
    asyncio.run(scenario())


def test_losing_the_partition_unloads_its_groups(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        await commit(coordinator, {("t", 0): 1})
        await join(coordinator, group="waiting", rebalance=10_000)
        pending = asyncio.ensure_future(join(coordinator, group="waiting", rebalance=10_000))
        await asyncio.sleep(0.01)  # the second join waits for the first member to rejoin
        partition = coordinator._broker.partitions[(OFFSETS_TOPIC, 0)]
        partition.is_leader = False
        coordinator.on_partitions_changed()
        assert (await pending).error == Errors.NotCoordinatorError.errno
        assert coordinator.list_groups() == []
        with pytest.raises(ApiError) as moved:
            coordinator.fetch_offsets("g", None)
        assert moved.value.code == Errors.NotCoordinatorError.errno
        partition.is_leader = True
        coordinator.on_partitions_changed()  # leading again: loaded from the log
        assert fetched(coordinator) == {("t", 0): 1}
        assert coordinator.store.get("waiting") is None  # never reached Stable, so never written
    asyncio.run(scenario())


def test_undecodable_records_are_skipped_logged_and_counted(make_coordinator, caplog):
    """A 3-byte key, a value cut short and a batch whose records do not parse: the loader
    skips each, names partition and offset, and still loads the good records around them."""
    async def scenario():
        coordinator = make_coordinator()
        await commit(coordinator, {("t", 0): 5})
        partition = coordinator._broker.partitions[(OFFSETS_TOPIC, 0)]
        garbage_at = partition.append(build_batch([(b"\x00\x01\x02", b"v")], now_ms()), now_ms()).first_offset
        partition.append(build_batch([(offset_key("g", "t", 1), b"\x00\x03\x00")], now_ms()), now_ms())
        unparsable = build_batch([(b"k", b"v")], now_ms())
        unparsable[-4:-1] = b"\xff\xff\xff"              # a record's varints run past the batch
        unparsable[17:21] = calc_crc32c(memoryview(unparsable)[21:]).to_bytes(4, "big")  # re-signed: not a CRC error
        # Produce now refuses such a batch (CORRUPT_MESSAGE), so it is planted as replicated bytes,
        # as if it had been written before that check existed.
        unparsable[0:8] = partition.log.log_end_offset.to_bytes(8, "big")
        partition.log.append_as_follower(unparsable, now_ms=now_ms())
        await commit(coordinator, {("t", 2): 7})

        reloaded = make_coordinator()
        assert fetched(reloaded) == {("t", 0): 5, ("t", 2): 7}
        assert reloaded.store.undecodable_records == 3
        assert f"{OFFSETS_TOPIC}-0 offset {garbage_at}:" in caplog.text
    asyncio.run(scenario())


def beat(coordinator, member_id, epoch, topics=None, *, group="big", regex=None):
    """A ConsumerGroupHeartbeat (KIP-848): joining at epoch 0, else carrying on unchanged."""
    return coordinator.consumer_group_heartbeat(HeartbeatRequest(
        group_id=group, member_id=member_id, member_epoch=epoch, instance_id=None, rack_id=None,
        rebalance_timeout_ms=30000 if epoch == 0 else -1, subscribed_topic_names=topics,
        subscribed_topic_regex=regex, server_assignor=None, owned=frozenset() if epoch == 0 else None,
        client_id="c", client_host="/h"))


class CountingTopics(dict):
    """An image's topics that count how often all of them are gone through."""
    scans = 0

    def items(self):
        self.scans += 1
        return super().items()


def test_regex_subscriptions_are_matched_once_per_metadata_change(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        image = coordinator._broker.image
        image.topics = CountingTopics({f"orders-{i}": TopicState(f"orders-{i}", uuid.uuid4(), partitions={
            0: PartitionState(0, [0], 0)}) for i in range(50)})
        epochs = {}
        for i in range(20):   # 20 members of one regex, heartbeating 10 times each
            epochs[f"m{i}"] = (await beat(coordinator, f"m{i}", 0, group="rx", regex="orders-[0-9]+")).member_epoch
        for _ in range(10):
            for member_id in epochs:
                epochs[member_id] = (await beat(coordinator, member_id, epochs[member_id], group="rx")).member_epoch
        assert image.topics.scans == 1   # not once per member per heartbeat
        image.topics["orders-x1"] = TopicState("orders-x1", uuid.uuid4(), partitions={0: PartitionState(0, [0], 0)})
        image.topics["orders-77"] = TopicState("orders-77", uuid.uuid4(), partitions={0: PartitionState(0, [0], 0)})
        image.version += 1    # as the metadata records raise it
        group_epoch = coordinator.store.get("rx").group_epoch
        await beat(coordinator, "m0", epochs["m0"], group="rx")
        assert image.topics.scans == 2 and coordinator.store.get("rx").group_epoch == group_epoch + 1
        assert set(coordinator.store.get("rx").subscription_metadata) == {f"orders-{i}" for i in (*range(50), 77)}
    asyncio.run(scenario())


def test_a_member_too_large_to_write_is_refused_and_a_big_group_is_written_in_batches(make_coordinator):
    def names(prefix, count):   # topic names of 240 bytes: `count` of them take count * 240 bytes
        return [f"{prefix}{i:05d}".ljust(240, "x") for i in range(count)]

    async def scenario():
        coordinator = make_coordinator()
        first = await beat(coordinator, "m1", 0, ["t"])
        with pytest.raises(ApiError) as refused:   # 1.2 MB: no batch of __consumer_offsets holds its record
            await beat(coordinator, "hostile", 0, names("h", 5000))
        assert refused.value.code == Errors.UnknownError.errno
        with pytest.raises(ApiError) as refused:   # a classic member: its protocols and their topics, 1.2 MB
            await join(coordinator, group="big", protocols=[("range", subscription(names("c", 2500)))])
        assert refused.value.code == Errors.UnknownError.errno
        assert sorted(coordinator.store.get("big").members) == ["m1"]   # neither changed anything
        assert (await beat(coordinator, "m1", first.member_epoch)).member_epoch == first.member_epoch

        # Two members of 600 KB each fit alone, but not together in one batch.
        await beat(coordinator, "m2", 0, names("a", 2500))
        await beat(coordinator, "m3", 0, names("b", 2500))
        partition = coordinator._broker.partitions[(OFFSETS_TOPIC, 0)]
        partition.is_leader = False     # a write fails: the next one rewrites the whole group
        with pytest.raises(ApiError):
            await beat(coordinator, "m4", 0, ["t"])
        partition.is_leader = True
        answer = await beat(coordinator, "m1", coordinator.store.get("big").members["m1"].member_epoch)
        assert coordinator.store.get("big").written_ok

        group = make_coordinator().store.get("big")
        assert sorted(group.members) == ["m1", "m2", "m3", "m4"]
        assert group.members["m2"].subscribed_topics == frozenset(names("a", 2500))
        assert group.members["m1"].member_epoch == answer.member_epoch
    asyncio.run(scenario())


def test_a_groups_writes_reach_the_log_in_the_order_they_were_asked_for(make_coordinator, monkeypatch):
    """A commit of thousands of partitions is built in slices of the loop (here the slices are
    as short as they can be, so that it yields on any machine); a smaller commit of the same
    group asked for after it is appended after it, so the later offset wins in memory and after
    a restart."""
    monkeypatch.setattr(slices, "SLICE_S", 0.0)

    async def scenario():
        coordinator = make_coordinator()
        big = {("t", i): 1 for i in range(2000)}
        first = asyncio.create_task(commit(coordinator, big))
        second = asyncio.create_task(commit(coordinator, {("t", 0): 2}))
        await asyncio.gather(first, second)
        assert fetched(coordinator)[("t", 0)] == 2
        assert fetched(make_coordinator())[("t", 0)] == 2
    asyncio.run(scenario())
