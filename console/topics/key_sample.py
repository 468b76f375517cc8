"""A read for the add-partitions preview: do the topic's records carry keys?

Kafka's default partitioner sends a keyed record to murmur2(key) % partitions; adding
partitions changes that partition for most keys, so records of one key written before and
after the change land in different partitions and a consumer no longer reads them in order.
The preview warns when the topic's newest records have keys. It reads the last
`RECORDS_PER_PARTITION` records of each partition (one Fetch per leader, at most
`BYTES_PER_PARTITION` each), so a topic of any size costs one small round trip.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from console.clusters.models import Cluster
from console.kafka_gateway.batches import scan_batches
from console.kafka_gateway.consumer import open_topic_reader

RECORDS_PER_PARTITION = 20
BYTES_PER_PARTITION = 64 * 1024


@dataclass(frozen=True)
class KeySample:
    records: int            # records read (the newest of each partition)
    keyed: int              # of them, records with a key

    @property
    def has_keys(self) -> bool:
        return self.keyed > 0


def topic_key_sample(*, cluster: Cluster, name: str) -> KeySample:
    with open_topic_reader(cluster.connection_settings(), name,
                           request_timeout_ms=settings.KAFKA_REQUEST_TIMEOUT_MS) as reader:
        offsets = reader.offsets()
        positions = {p: max(o.log_start_offset, o.high_watermark - RECORDS_PER_PARTITION)
                     for p, o in offsets.items() if o.high_watermark > o.log_start_offset}
        fetched = reader.fetch(positions, partition_max_bytes=BYTES_PER_PARTITION) if positions else {}
    records = keyed = 0
    for partition, answer in fetched.items():
        for _info, batch in scan_batches(answer.records, from_offset=positions[partition]):
            for record in batch or ():
                if record.offset >= positions[partition]:
                    records += 1
                    keyed += record.key is not None
    return KeySample(records=records, keyed=keyed)
