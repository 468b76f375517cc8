"""`__consumer_offsets` holds only what the coordinator wrote: clients cannot produce there,
and a record the loader cannot read (a disk or an old bug put it there) is skipped, so the
engine still starts, serves the group's offsets and stops cleanly."""
from __future__ import annotations

import kafka.errors as Errors
import pytest
from confluent_kafka import Consumer, TopicPartition

from engine.coordinator.offsets_records import build_batch
from engine.storage.records import iter_batches
from tests.engine.coordinator.test_offsets_durability import committed
from tests.engine.protocol.test_bad_input import build_batch as client_batch, produce
from tests.support.groups import create_topic
from tests.support.raw_client import RawClient


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__transaction_state"])
def test_clients_cannot_produce_to_internal_topics(engine_cluster, topic):
    for port in engine_cluster.ports:  # refused on every broker, leader or not, created or not
        client = RawClient(port)
        assert produce(client, topic, bytes(client_batch([b"\x00\x01\x02"]))) == Errors.InvalidTopicError.errno
        client.close()


def test_an_undecodable_offsets_record_neither_stops_start_nor_stop(engine_factory, tmp_path):
    data_dir = tmp_path / "data"
    configs = {"offsets.topic.num.partitions": "1"}
    engine = engine_factory(brokers=1, configs=configs, data_dir=data_dir)
    create_topic(engine.bootstrap, "t", 1)
    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": "g"})
    consumer.commit(offsets=[TopicPartition("t", 0, 42)], asynchronous=False)
    consumer.close()
    engine.kill()

    _append_to_log(data_dir / "broker-0" / "__consumer_offsets-0", [(b"\x00\x01\x02", b"garbage")])
    engine = engine_factory(brokers=1, configs=configs, data_dir=data_dir)
    assert committed(engine.bootstrap, "g") == {("t", 0): 42}
    assert "skipped an undecodable record at __consumer_offsets-0 offset" in engine.log_text()
    assert engine.terminate() == 0, engine.log_text()


def _append_to_log(partition_dir, records) -> None:
    """Append a well-formed batch (valid CRC) after the last one of the active segment."""
    segment = sorted(partition_dir.glob("*.log"))[-1]
    data = segment.read_bytes()
    next_offset = max((h.next_offset for _, h in iter_batches(data)), default=int(segment.stem))
    batch = build_batch(records, 1_700_000_000_000)
    batch[0:8] = next_offset.to_bytes(8, "big")  # baseOffset lies outside the CRC
    with segment.open("ab") as out:
        out.write(batch)
