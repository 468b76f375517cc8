"""SIGTERM is a clean shutdown: every broker's log dir gets `.kafka_cleanshutdown` and the next
start validates no segment. After kill -9 there is no marker: recovery validates the segments
above the recovery points again and cuts a torn tail, and every acknowledged record is back.
The counts come from the engine's own load summary (LogManager.load)."""
import re
from pathlib import Path

from confluent_kafka import Producer

from tests.engine.test_serve_cli import make_topic, read_everything

PARTITIONS = 4
SUMMARY = re.compile(r"Loaded (\d+) logs from (\S+) in [\d.]+ s after (a clean|an unclean) shutdown: "
                     r"(\d+) segments recovered, (\d+) bytes truncated")
# A batch header whose length runs past the end of the file: what a write cut by a crash leaves.
TORN_TAIL = (0).to_bytes(8, "big") + (5000).to_bytes(4, "big") + b"\x00" * 20


def load_summaries(engine, since: int) -> dict[str, tuple[str, int, int]]:
    """Per log dir, from the engine's log after byte `since`: (kind of shutdown, segments recovered, bytes truncated)."""
    with open(engine.log_path, "rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    return {Path(m.group(2)).name: (m.group(3), int(m.group(4)), int(m.group(5))) for m in SUMMARY.finditer(text)}


def produce(bootstrap: str, topic: str, tag: str, count: int) -> list[tuple[int, int, bytes]]:
    acked = []

    def on_delivery(err, message):
        if err is None:
            acked.append((message.partition(), message.offset(), message.value()))
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=f"{tag}-{i}".encode(), partition=i % PARTITIONS, on_delivery=on_delivery)
    assert producer.flush(30) == 0
    assert len(acked) == count
    return acked


def test_clean_shutdown_skips_recovery_and_kill_nine_recovers_a_torn_tail(engine_factory, tmp_path, topic_name):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=2, data_dir=data_dir)
    make_topic(engine.bootstrap, topic_name, PARTITIONS)
    acked = produce(engine.bootstrap, topic_name, "before-sigterm", 400)

    assert engine.terminate() == 0
    assert all((data_dir / f"broker-{b}" / ".kafka_cleanshutdown").exists() for b in (0, 1))
    since = engine.log_path.stat().st_size
    engine.start()
    assert load_summaries(engine, since) == {"broker-0": ("a clean", 0, 0), "broker-1": ("a clean", 0, 0)}
    assert not any((data_dir / f"broker-{b}" / ".kafka_cleanshutdown").exists() for b in (0, 1))

    acked += produce(engine.bootstrap, topic_name, "before-kill", 400)
    engine.kill()
    segment = sorted((data_dir / "broker-0").glob(f"{topic_name}-*/00000000000000000000.log"))[0]
    intact = segment.stat().st_size
    with open(segment, "ab") as torn:
        torn.write(TORN_TAIL)
    since = engine.log_path.stat().st_size
    engine.start()

    summaries = load_summaries(engine, since)
    assert set(summaries) == {"broker-0", "broker-1"}
    for kind, recovered, _ in summaries.values():
        assert kind == "an unclean" and recovered >= PARTITIONS // 2   # each log's unflushed tail, validated
    assert summaries["broker-0"][2] == len(TORN_TAIL)
    assert segment.stat().st_size == intact
    stored = read_everything(engine.bootstrap, topic_name, PARTITIONS)
    assert sorted((p, o, v) for p, records in stored.items() for o, v in records) == sorted(acked)
