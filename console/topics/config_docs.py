"""One line per Kafka topic config, for the tooltip of the configs table.

DescribeConfigs v3+ carries the broker's own documentation string, and Apache Kafka sends
it; the console shows that when it comes. Brokers that send none (our engine today) get
these lines, which follow the meaning in Kafka's topic config reference (written here in our
own words, kept short)."""
from __future__ import annotations

TOPIC_CONFIG_DOCS: dict[str, str] = {
    "cleanup.policy": "delete: drop old segments by retention time or size; compact: keep the latest record per "
                      "key; both may be combined.",
    "compression.type": "Codec the broker stores batches in: producer keeps what the producer sent; or gzip, "
                        "snappy, lz4, zstd, uncompressed.",
    "delete.retention.ms": "How long tombstones (null-value records) stay in a compacted topic, so slow "
                           "consumers still see the deletion.",
    "file.delete.delay.ms": "Wait before a deleted segment's files are removed from disk.",
    "flush.messages": "Force an fsync after this many records (replication normally makes this unnecessary).",
    "flush.ms": "Force an fsync when this much time passed since the last one.",
    "follower.replication.throttled.replicas": "Replicas (partition:broker) whose follower fetches are throttled "
                                               "during a reassignment.",
    "index.interval.bytes": "How many bytes of log lie between two offset index entries.",
    "leader.replication.throttled.replicas": "Replicas (partition:broker) whose leader side is throttled during a "
                                             "reassignment.",
    "local.retention.bytes": "With tiered storage: bytes kept on local disk per partition before only the remote "
                             "copy remains.",
    "local.retention.ms": "With tiered storage: how long segments stay on local disk.",
    "max.compaction.lag.ms": "Longest time a record may stay uncompacted in a compacted topic.",
    "max.message.bytes": "Largest record batch the broker accepts for this topic.",
    "message.downconversion.enable": "Whether the broker converts batches down for fetchers of old protocol "
                                     "versions.",
    "message.timestamp.after.max.ms": "How far in the future a record's CreateTime timestamp may be before the "
                                      "batch is refused.",
    "message.timestamp.before.max.ms": "How far in the past a record's CreateTime timestamp may be before the "
                                       "batch is refused.",
    "message.timestamp.difference.max.ms": "Largest allowed gap between the broker's clock and a record's "
                                           "CreateTime (older brokers).",
    "message.timestamp.type": "CreateTime keeps the producer's timestamp; LogAppendTime stamps records with the "
                              "broker's clock.",
    "min.cleanable.dirty.ratio": "Share of the log that must be uncompacted before the cleaner compacts it.",
    "min.compaction.lag.ms": "Shortest time a record stays uncompacted, so consumers can read every update.",
    "min.insync.replicas": "With acks=all, a write fails unless at least this many replicas are in sync.",
    "preallocate": "Preallocate segment files on disk when they are created.",
    "remote.storage.enable": "Move closed segments to tiered (remote) storage.",
    "retention.bytes": "Largest size a partition's log may reach before old segments are deleted (-1: no limit).",
    "retention.ms": "How long records are kept before their segment is deleted (-1: forever).",
    "segment.bytes": "Size at which the active segment is closed and a new one started.",
    "segment.index.bytes": "Size of the offset index file preallocated per segment.",
    "segment.jitter.ms": "Random time taken off segment.ms, so segments of many partitions do not roll at once.",
    "segment.ms": "Time after which the active segment is rolled even if not full, so retention can act.",
    "unclean.leader.election.enable": "Let a replica that is not in sync become leader, accepting data loss to "
                                      "stay available.",
}


def config_doc(name: str, from_broker: str | None) -> str:
    return from_broker or TOPIC_CONFIG_DOCS.get(name, "")
