"""A corrupt batch written straight into a stopped engine's log, as a disk written by another
broker (or a bug) could hold one: signed, so it is served, but its records do not parse.

`poisoned_engine` starts a one-broker engine with a compacted topic whose partition 0 holds
such a batch in a segment the cleaner will reach, between readable records on both sides.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from engine.storage.records import iter_batches
from tests.support.engine_process import EngineProcess
from tests.support.groups import create_topic, produce
from tests.support.record_batches import record, seal

POISON_CONFIGS = {"log.cleaner.backoff.ms": "200", "offsets.topic.num.partitions": "3",
                  "offsets.topic.segment.bytes": "2048", "group.initial.rebalance.delay.ms": "0"}
COMPACTED = {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"}


POISON_RECORDS = 2


def poison_records() -> tuple[bytes, int]:
    """Two records, the second saying it has 7 headers and holding 1: no reader can go on."""
    return record(0, b"k0", b"fine") + record(1, b"k1", b"bad", [(b"h", b"x")], header_count=7), POISON_RECORDS


def plant(data_dir: Path, topic: str, partition: int, body: bytes, count: int) -> int:
    """Append a signed batch of `body` to the partition's last segment (the engine stopped), at
    the log's next offset; returns that offset."""
    (partition_dir,) = Path(data_dir).glob(f"**/{topic}-{partition}")
    segment = max(partition_dir.glob("*.log"), key=lambda p: int(p.stem))
    data = segment.read_bytes()
    batches = [header for _, header in iter_batches(data)]
    next_offset = batches[-1].next_offset if batches else int(segment.stem)
    batch = seal(body, count)
    struct.pack_into(">q", batch, 0, next_offset)                                  # outside the CRC
    struct.pack_into(">i", batch, 12, batches[-1].partition_leader_epoch if batches else 0)
    with open(segment, "ab") as log:
        log.write(batch)
    return next_offset


@dataclass
class Poisoned:
    engine: EngineProcess
    topic: str            # compacted; partition 0 holds the corrupt batch
    healthy: str          # compacted too, two partitions, nothing wrong with them
    offset: int           # where the corrupt batch starts


def poisoned_engine(data_dir: Path) -> Poisoned:
    engine = EngineProcess(data_dir, brokers=1, configs=POISON_CONFIGS).start()
    topic, healthy = "poisoned", "healthy"
    create_topic(engine.bootstrap, topic, 1, configs=COMPACTED)
    create_topic(engine.bootstrap, healthy, 2, configs=COMPACTED)
    produce(engine.bootstrap, topic, [(b"k%d" % (i % 5), b"before-%d" % i) for i in range(20)], partition=0)
    assert engine.terminate() == 0
    offset = plant(data_dir, topic, 0, *poison_records())
    engine.start()
    # Readable records after it, and enough of them to roll it out of the active segment.
    produce(engine.bootstrap, topic, [(b"k%d" % (i % 5), b"after-%d-" % i + b"x" * 200) for i in range(12)],
            partition=0)
    for partition in (0, 1):   # in several batches: segments roll, so the cleaner has work there
        for first in range(0, 30, 5):
            produce(engine.bootstrap, healthy, [(b"k%d" % (i % 5), b"v%d-" % i + b"x" * 200)
                                                for i in range(first, first + 5)], partition=partition)
    return Poisoned(engine, topic, healthy, offset)
