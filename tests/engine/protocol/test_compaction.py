"""Log compaction seen by clients: a consumer reading a compacted topic from offset 0 gets the
latest value of every key; tombstones go after delete.retention.ms; an active producer's
emptied last batch is read across; `__consumer_offsets` is compacted too and still loads
after a restart."""
from __future__ import annotations

import time

import confluent_kafka
from kafka import KafkaConsumer, TopicPartition

from engine.coordinator.group_store import OFFSETS_TOPIC, partition_for
from engine.storage.errors import CorruptRecordError
from engine.storage.records import iter_batches, whole_batches_size
from tests.support.groups import GROUP_TEST_CONFIGS, GroupClient, create_topic, produce, wait_until

COMPACTED = {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"}


def read_from_zero(bootstrap: str, topic: str, partition: int = 0) -> list[tuple[int, bytes, bytes | None]]:
    """(offset, key, value) of every record of the partition, from offset 0 to its end."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic, partition)
    try:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        end = consumer.end_offsets([tp])[tp]
        records = []
        deadline = time.monotonic() + 20
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                records += [(r.offset, r.key, r.value) for r in batch]
        return records
    finally:
        consumer.close()


def filler(bootstrap: str, topic: str, count: int = 12) -> None:
    """Records of one key, big enough to roll segments so earlier ones leave the active segment."""
    produce(bootstrap, topic, [(b"filler", b"x" * 300) for _ in range(count)])


def keyed(records, prefix: bytes = b"k") -> dict[bytes, list]:
    out: dict[bytes, list] = {}
    for offset, key, value in records:
        if key.startswith(prefix):
            out.setdefault(key, []).append((offset, value))
    return out


def test_a_compacted_topic_keeps_the_latest_value_of_every_key(group_cluster, topic_name):
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, 1, configs=COMPACTED)
    produce(bootstrap, topic_name, [(f"k{i % 10}".encode(), f"v{i}".encode()) for i in range(100)])
    filler(bootstrap, topic_name)
    latest = {f"k{k}".encode(): f"v{90 + k}".encode() for k in range(10)}

    def compacted():
        by_key = keyed(read_from_zero(bootstrap, topic_name))
        return by_key if all(len(v) == 1 for v in by_key.values()) else None

    by_key = wait_until(compacted, message="one record per key")
    assert {key: values[0][1] for key, values in by_key.items()} == latest
    assert {key: values[0][0] for key, values in by_key.items()} == {f"k{k}".encode(): 90 + k for k in range(10)}
    records = read_from_zero(bootstrap, topic_name)
    offsets = [offset for offset, _, _ in records]
    assert offsets == sorted(set(offsets)) and offsets[0] > 0  # offsets kept: gaps, never renumbered


def empty_batches_on_disk(data_dir, topic: str) -> list[tuple[int, int, int]]:
    """(base offset, last offset, producer id) of the zero-record batches in the partition's
    segment files, on whichever broker holds them."""
    found = []
    for segment in sorted(data_dir.rglob(f"{topic}-0/*.log")):
        data = segment.read_bytes()
        try:
            found += [(h.base_offset, h.last_offset, h.producer_id)
                      for _, h in iter_batches(data[:whole_batches_size(data)]) if not h.records_count]
        except CorruptRecordError:
            return []      # a batch being written: look again
    return found


def read_with_confluent(bootstrap: str, topic: str) -> list[tuple[int, bytes, bytes | None]]:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader",
                                         "enable.auto.commit": False})
    try:
        end = consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, 0), timeout=15)[1]
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        records, position = [], 0
        deadline = time.monotonic() + 20
        while position < end and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            assert message.error() is None, message.error()
            records.append((message.offset(), message.key(), message.value()))
            position = message.offset() + 1
        return records
    finally:
        consumer.close()


def test_clients_read_across_an_active_producers_emptied_batch(group_cluster, topic_name):
    """The idempotent producer's only batch is superseded by another client's: the cleaner
    keeps it as an empty batch (its last sequence), which both clients read across."""
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, 1, configs=COMPACTED)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                                         "linger.ms": 50})
    for i in range(5):
        producer.produce(topic_name, key=f"k{i}".encode(), value=b"idempotent", partition=0)
    assert producer.flush(15) == 0
    produce(bootstrap, topic_name, [(f"k{i}".encode(), b"newer") for i in range(5)], partition=0)
    filler(bootstrap, topic_name)

    [(base, last, _)] = wait_until(lambda: empty_batches_on_disk(group_cluster.data_dir, topic_name),
                                   message="the producer's last batch kept empty")
    assert (base, last) == (0, 4)
    expected = {f"k{i}".encode(): [(5 + i, b"newer")] for i in range(5)}
    for read in (read_from_zero, read_with_confluent):
        records = read(bootstrap, topic_name)
        assert keyed(records) == expected, read.__name__
        assert records[-1][0] == end_offset(bootstrap, topic_name) - 1, read.__name__


def end_offset(bootstrap: str, topic: str) -> int:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tp = TopicPartition(topic, 0)
        return consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()


def tombstoned_topic(bootstrap: str, topic: str, delete_retention_ms: int) -> None:
    """k0..k4 written, then tombstones for k0..k2, then filler so they leave the active segment."""
    create_topic(bootstrap, topic, 1, configs={**COMPACTED, "delete.retention.ms": str(delete_retention_ms)})
    produce(bootstrap, topic, [(f"k{i}".encode(), b"value") for i in range(5)])
    produce(bootstrap, topic, [(f"k{i}".encode(), None) for i in range(3)])
    filler(bootstrap, topic)


# Each phase of a tombstone's life gets its own topic, so no test has to catch a window between
# two cleanings: a day keeps the tombstones past the end of the test, zero lets the next cleaning
# take them (the delete horizon itself is unit-tested in tests/engine/storage/test_cleaner.py).
def test_tombstones_stay_for_delete_retention_ms_after_their_values_go(group_cluster, topic_name):
    bootstrap = group_cluster.bootstrap
    tombstoned_topic(bootstrap, topic_name, delete_retention_ms=24 * 3600 * 1000)

    def values_under_tombstones_removed():
        by_key = keyed(read_from_zero(bootstrap, topic_name))
        return by_key if all(len(v) == 1 for v in by_key.values()) else None

    by_key = wait_until(values_under_tombstones_removed, message="the values under the tombstones removed")
    assert {key: values[0][1] for key, values in by_key.items()} == {
        b"k0": None, b"k1": None, b"k2": None, b"k3": b"value", b"k4": b"value"}


def test_tombstones_disappear_after_delete_retention_ms(group_cluster, topic_name):
    bootstrap = group_cluster.bootstrap
    tombstoned_topic(bootstrap, topic_name, delete_retention_ms=0)
    # Without any new writes, the values and then the tombstones go; k3 and k4 keep their values.

    def only_live_keys_left():
        by_key = keyed(read_from_zero(bootstrap, topic_name))
        return by_key if set(by_key) == {b"k3", b"k4"} else None

    by_key = wait_until(only_live_keys_left, message="the tombstones removed")
    assert {key: [value for _, value in values] for key, values in by_key.items()} == {
        b"k3": [b"value"], b"k4": [b"value"]}


def test_consumer_offsets_is_compacted_and_loads_after_a_restart(engine_factory, tmp_path, topic_name):
    configs = {**GROUP_TEST_CONFIGS, "offsets.topic.segment.bytes": "2048"}
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=1, configs=configs, data_dir=data_dir)
    create_topic(engine.bootstrap, topic_name, 1)
    client = GroupClient(engine, "compacted-offsets")
    try:
        for offset in range(1, 201):
            assert client.commit({(topic_name, 0): offset}) == {(topic_name, 0): 0}
    finally:
        client.close()
    shard = partition_for("compacted-offsets", int(GROUP_TEST_CONFIGS["offsets.topic.num.partitions"]))

    def commits_left():
        commits = [r for r in read_from_zero(engine.bootstrap, OFFSETS_TOPIC, shard) if b"compacted-offsets" in r[1]]
        return commits if len(commits) < 20 else None

    commits = wait_until(commits_left, message="__consumer_offsets compacted")
    assert commits[-1][0] > 150  # the newest commits are what is left
    assert engine.terminate() == 0
    engine = engine_factory(brokers=1, configs=configs, data_dir=data_dir)
    client = GroupClient(engine, "compacted-offsets")
    try:
        assert client.fetch([(topic_name, 0)]) == (0, {(topic_name, 0): 200})
    finally:
        client.close()
