"""A leader's log is damaged (a bad batch in the middle, a cut tail) and the engine is
killed under acks=all load: at restart the replica with the longest log leads, the damaged
one re-fetches as a follower, and every acknowledged record reads back (KIP-966's idea)."""
import time
from collections import defaultdict

from engine.storage.records import HEADER_SIZE, iter_batches
from tests.engine.cluster.acked_load import assert_acked_records_back, produce_then_kill
from tests.engine.cluster.helpers import create_topic, partition_state
from tests.engine.cluster.test_broker_failure import PARTITIONS


def test_a_damaged_leader_does_not_spread_its_loss(engine_factory, topic_name, tmp_path):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=3, configs={"replica.lag.time.max.ms": "3000"}, data_dir=data_dir)
    create_topic(engine.bootstrap, topic_name, PARTITIONS, 3, {"min.insync.replicas": "2"})
    leaders = {p: leader for p, (leader, _, _) in partition_state(engine.bootstrap, topic_name).items()}
    acked: dict[int, dict[int, bytes]] = defaultdict(dict)
    deadline = time.monotonic() + 60   # small batches until every partition has many, however slow the machine
    produce_then_kill(engine, topic_name, acked,
                      lambda: time.monotonic() < deadline and min(len(acked[p]) for p in range(PARTITIONS)) < 1000,
                      tag="v", **{"batch.num.messages": 50})

    for partition, leader in leaders.items():
        segment = sorted((data_dir / f"broker-{leader}" / f"{topic_name}-{partition}").glob("*.log"))[-1]
        data = bytearray(segment.read_bytes())
        batches = list(iter_batches(data))
        assert len(batches) > 4, "too little load to damage the middle of the log"
        position, _ = batches[len(batches) // 2]
        data[position + HEADER_SIZE + 2] ^= 0xFF     # inside the records: a CRC error in the middle
        segment.write_bytes(bytes(data[:-37]))       # and a torn tail

    engine.start()
    assert_acked_records_back(engine, topic_name, acked, "after a damaged leader")
    assert sum(len(r) for r in acked.values()) > 0
    for partition, leader in leaders.items():   # it led again only once back in sync (preferred replica)
        assert f"{topic_name}-{partition} after recovery: leader {leader} -> " in engine.log_path.read_text()
