"""kill -9 the whole replicated engine under acks=all load, restart, repeat: nothing
acknowledged is lost and every replica agrees again."""
import threading
from collections import defaultdict

from tests.engine.cluster.acked_load import assert_acked_records_back, produce_then_kill
from tests.engine.cluster.helpers import create_topic
from tests.engine.cluster.test_broker_failure import PARTITIONS


def test_kill_nine_cycles_lose_no_acknowledged_record(engine_factory, topic_name, tmp_path):
    engine = engine_factory(brokers=3, configs={"replica.lag.time.max.ms": "3000"}, data_dir=tmp_path / "data")
    create_topic(engine.bootstrap, topic_name, PARTITIONS, 3, {"min.insync.replicas": "2"})
    acked: dict[int, dict[int, bytes]] = defaultdict(dict)
    for cycle in range(3):
        deadline = threading.Event()
        threading.Timer(1.5, deadline.set).start()
        produce_then_kill(engine, topic_name, acked, lambda: not deadline.is_set(), tag=f"c{cycle}")
        engine.start()
        stored = assert_acked_records_back(engine, topic_name, acked, f"cycle {cycle}")
        for records in stored.values():
            assert [o for o, _ in records] == list(range(len(records)))
    assert sum(len(v) for v in acked.values()) > 0
