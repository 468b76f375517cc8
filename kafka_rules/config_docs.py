"""One short line per config that the engine defines: topic, broker and group configs.

Each line follows the meaning of the config in Kafka's configuration reference, written here in
the project's own words, with its unit. The engine answers DescribeConfigs
with them as each entry's `documentation` (v3+); the console shows them as tooltips, falling back
to them for clusters that send no documentation of their own.

A few names are both topic and broker configs (`min.insync.replicas`, `compression.type`,
`unclean.leader.election.enable`): `topic_config_doc` prefers the topic line, `broker_config_doc`
the broker line. Configs the engine accepts without acting on them (docs/limitations.md) are
described by Kafka's meaning all the same.
"""
from __future__ import annotations

TOPIC_CONFIG_DOCS: dict[str, str] = {
    "cleanup.policy": "delete: drop old segments by retention time or size; compact: keep the latest record per "
                      "key; both may be combined.",
    "compression.gzip.level": "The gzip level (1-9, -1 for the codec's default) when the broker compresses with gzip.",
    "compression.lz4.level": "The lz4 level (1-17) when the broker compresses with lz4.",
    "compression.type": "Codec the broker stores batches in: producer keeps what the producer sent; or gzip, "
                        "snappy, lz4, zstd, uncompressed.",
    "compression.zstd.level": "The zstd level (-131072 to 22) when the broker compresses with zstd.",
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
    "message.timestamp.after.max.ms": "How many ms newer than the broker's clock a CreateTime record may be; a newer "
                                      "one is refused with INVALID_TIMESTAMP.",
    "message.timestamp.before.max.ms": "How many ms older than the broker's clock a CreateTime record may be; an older "
                                       "one is refused with INVALID_TIMESTAMP.",
    "message.timestamp.difference.max.ms": "Largest allowed gap between the broker's clock and a record's "
                                           "CreateTime (older brokers).",
    "message.timestamp.type": "CreateTime keeps the producer's timestamp; LogAppendTime stamps records with the "
                              "broker's clock.",
    "min.cleanable.dirty.ratio": "Share of the log that must be uncompacted before the cleaner compacts it.",
    "min.compaction.lag.ms": "Shortest time a record stays uncompacted, so consumers can read every update.",
    "min.insync.replicas": "With acks=all, a write fails unless at least this many replicas are in sync.",
    "preallocate": "Preallocate segment files on disk when they are created.",
    "remote.log.copy.disable": "With tiered storage: stop copying segments to remote storage (reads go on).",
    "remote.log.delete.on.disable": "With tiered storage: delete the remote copies when remote storage is turned "
                                    "off for the topic.",
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

BROKER_CONFIG_DOCS: dict[str, str] = {
    "allow.everyone.if.no.acl.found": "When true, a resource that no ACL matches is open to every principal; when "
                                      "false only super users may use it.",
    "authorizer.class.name": "Class of the authorizer that checks requests against ACLs; empty turns authorization "
                             "off.",
    "auto.create.topics.enable": "Create a topic when a client asks for metadata of a topic that does not exist.",
    "auto.leader.rebalance.enable": "Periodically move partition leadership back to each partition's preferred "
                                    "replica when brokers are imbalanced.",
    "compression.gzip.level": "Default of the topic config compression.gzip.level (1-9, -1 for the codec's default).",
    "compression.lz4.level": "Default of the topic config compression.lz4.level (1-17).",
    "compression.type": "Default of the topic config compression.type: producer keeps what the producer sent; or "
                        "gzip, snappy, lz4, zstd, uncompressed.",
    "compression.zstd.level": "Default of the topic config compression.zstd.level (-131072 to 22).",
    "connections.max.idle.ms": "Close a connection that has been idle for this many ms.",
    "controlled.shutdown.enable": "Move partition leadership off a broker before it stops, so its partitions are not "
                                  "left without a leader.",
    "controller_mutation_rate": "Partitions per second a client may create or delete when no client quota is set for "
                                "it; unset means no limit.",
    "default.replication.factor": "Replication factor of topics created automatically or without an explicit one.",
    "delete.topic.enable": "Allow topics to be deleted; when false, DeleteTopics is refused.",
    "engine.admin.endpoint": "host:port of this engine's admin interface, through which brokers are stopped and "
                             "started (read-only).",
    "engine.log.cleaner.uncleanable.partitions": "Partitions this broker's log cleaner gave up on, as "
                                                 "comma-separated topic-partition names (read-only).",
    "fetch.max.bytes": "Most bytes the broker returns in one Fetch response, whatever the consumer asks for.",
    "follower.replication.throttled.rate": "Bytes per second followers may fetch for the replicas listed in a "
                                           "topic's follower.replication.throttled.replicas.",
    "group.consumer.assignors": "Server-side partition assignors of consumer-protocol groups; the first one is the "
                                "default.",
    "group.consumer.heartbeat.interval.ms": "Heartbeat interval in ms given to members of consumer-protocol groups "
                                            "that set none of their own.",
    "group.consumer.max.heartbeat.interval.ms": "Largest heartbeat interval in ms a consumer-protocol group may set.",
    "group.consumer.max.session.timeout.ms": "Largest session timeout in ms a consumer-protocol group may set.",
    "group.consumer.max.size": "Most members a consumer-protocol group may have.",
    "group.consumer.migration.policy": "Which conversions between classic and consumer-protocol groups with members "
                                       "happen: disabled, upgrade, downgrade or bidirectional.",
    "group.consumer.min.heartbeat.interval.ms": "Smallest heartbeat interval in ms a consumer-protocol group may set.",
    "group.consumer.min.session.timeout.ms": "Smallest session timeout in ms a consumer-protocol group may set.",
    "group.consumer.session.timeout.ms": "A consumer-protocol member that sends no heartbeat for this many ms is "
                                         "removed, unless its group sets its own timeout.",
    "group.initial.rebalance.delay.ms": "How long in ms a new classic group waits for more members to join before "
                                        "its first rebalance.",
    "group.max.session.timeout.ms": "Largest session timeout in ms a member of a classic group may ask for.",
    "group.max.size": "Most members a classic group may have.",
    "group.min.session.timeout.ms": "Smallest session timeout in ms a member of a classic group may ask for.",
    "group.share.delivery.count.limit": "Times a record is delivered to a share group before it is archived and no "
                                        "longer offered (2-10).",
    "group.share.heartbeat.interval.ms": "Heartbeat interval in ms given to members of share groups that set none of "
                                         "their own.",
    "group.share.max.heartbeat.interval.ms": "Largest heartbeat interval in ms a share group may set.",
    "group.share.max.record.lock.duration.ms": "Longest record lock duration in ms a share group may set.",
    "group.share.max.session.timeout.ms": "Largest session timeout in ms a share group may set.",
    "group.share.max.share.sessions": "Most share sessions (of ShareFetch) a broker keeps at once.",
    "group.share.max.size": "Most members a share group may have (1-1000).",
    "group.share.min.heartbeat.interval.ms": "Smallest heartbeat interval in ms a share group may set.",
    "group.share.min.record.lock.duration.ms": "Shortest record lock duration in ms a share group may set.",
    "group.share.min.session.timeout.ms": "Smallest session timeout in ms a share group may set.",
    "group.share.partition.max.record.locks": "Most records of one share partition that may be acquired and not yet "
                                              "acknowledged at once (100-10000).",
    "group.share.record.lock.duration.ms": "How long in ms a share group member holds the records it acquired before "
                                           "they can be delivered again.",
    "group.share.session.timeout.ms": "A share group member that sends no heartbeat for this many ms is removed and "
                                      "its records released.",
    "leader.imbalance.check.interval.seconds": "How often in seconds the controller checks whether leadership should "
                                               "move back to preferred replicas.",
    "leader.imbalance.per.broker.percentage": "Percentage of a broker's partitions led by other brokers above which "
                                              "leadership is rebalanced.",
    "leader.replication.throttled.rate": "Bytes per second leaders may send for the replicas listed in a topic's "
                                         "leader.replication.throttled.replicas.",
    "log.cleaner.backoff.ms": "How long in ms the log cleaner sleeps when no log is due for cleaning.",
    "log.cleaner.dedupe.buffer.size": "Memory in bytes the log cleaner uses for its map of keys to their latest "
                                      "offsets.",
    "log.cleaner.delete.retention.ms": "Default of delete.retention.ms: how long in ms tombstones stay in a "
                                       "compacted topic.",
    "log.cleaner.enable": "Run the log cleaner, which compacts topics whose cleanup.policy includes compact.",
    "log.cleaner.io.buffer.size": "Size in bytes of the buffers the log cleaner reads and writes segments with.",
    "log.cleaner.max.compaction.lag.ms": "Default of max.compaction.lag.ms: longest time in ms a record may stay "
                                         "uncompacted.",
    "log.cleaner.min.cleanable.ratio": "Default of min.cleanable.dirty.ratio: share of a log that must be "
                                       "uncompacted before it is cleaned.",
    "log.cleaner.min.compaction.lag.ms": "Default of min.compaction.lag.ms: shortest time in ms a record stays "
                                         "uncompacted.",
    "log.cleanup.policy": "Default of cleanup.policy: delete old segments, compact to the latest record per key, or "
                          "both.",
    "log.flush.interval.messages": "Default of flush.messages: records appended to a partition before its log is "
                                   "fsynced.",
    "log.flush.interval.ms": "Default of flush.ms: longest time in ms a record stays unflushed before its log is "
                             "fsynced.",
    "log.flush.offset.checkpoint.interval.ms": "How often in ms each log's recovery point (its last flushed offset) "
                                               "is written to disk.",
    "log.flush.scheduler.interval.ms": "How often in ms the broker checks whether a log is due for an fsync under "
                                       "flush.ms.",
    "log.index.interval.bytes": "Default of index.interval.bytes: bytes of log between two offset index entries.",
    "log.index.size.max.bytes": "Default of segment.index.bytes: largest size in bytes of a segment's offset index.",
    "log.local.retention.bytes": "Default of local.retention.bytes (-2: the same as retention.bytes).",
    "log.local.retention.ms": "Default of local.retention.ms (-2: the same as retention.ms).",
    "log.message.timestamp.after.max.ms": "Default of message.timestamp.after.max.ms: how many ms newer than the "
                                          "broker's clock a CreateTime record may be.",
    "log.message.timestamp.before.max.ms": "Default of message.timestamp.before.max.ms: how many ms older than the "
                                           "broker's clock a CreateTime record may be.",
    "log.message.timestamp.type": "Default of message.timestamp.type: CreateTime keeps the producer's timestamp; "
                                  "LogAppendTime uses the broker's clock.",
    "log.preallocate": "Default of preallocate: whether segment files are preallocated on disk when created.",
    "log.retention.bytes": "Default of retention.bytes: largest size in bytes of a partition's log before old "
                           "segments are deleted (-1: no limit).",
    "log.retention.check.interval.ms": "How often in ms the broker looks for segments to delete under the retention "
                                       "settings.",
    "log.retention.hours": "Default of retention.ms in hours, used when log.retention.ms and log.retention.minutes "
                           "are unset.",
    "log.retention.minutes": "Default of retention.ms in minutes, used when log.retention.ms is unset.",
    "log.retention.ms": "Default of retention.ms: how long in ms records are kept before their segment is deleted "
                        "(-1: forever).",
    "log.roll.hours": "Default of segment.ms in hours, used when log.roll.ms is unset.",
    "log.roll.jitter.hours": "Default of segment.jitter.ms in hours, used when log.roll.jitter.ms is unset.",
    "log.roll.jitter.ms": "Default of segment.jitter.ms: random time in ms taken off each segment's roll time.",
    "log.roll.ms": "Default of segment.ms: age in ms at which the active segment is rolled even if not full.",
    "log.segment.bytes": "Default of segment.bytes: size in bytes at which the active segment is rolled.",
    "log.segment.delete.delay.ms": "Default of file.delete.delay.ms: how long in ms a deleted segment's files stay "
                                   "on disk.",
    "max.connection.creation.rate": "Most new connections per second the broker's listeners accept; past it the "
                                    "listener delays accepting. listener.name.<l>. sets one listener's.",
    "max.connections": "Most connections the broker's listeners hold at once; further clients wait until one "
                       "closes. listener.name.<l>. sets one listener's.",
    "max.connections.per.ip": "Most connections from one client address on all the broker's listeners; further "
                              "ones are closed at once.",
    "max.connections.per.ip.overrides": "Limits that replace max.connections.per.ip for some clients, as "
                                        "comma-separated host:count pairs (host name or address).",
    "max.incremental.fetch.session.cache.slots": "Most incremental fetch sessions (KIP-227) a broker keeps for its "
                                                 "consumers; 0 turns fetch sessions off.",
    "max.partitions": "Most partitions the cluster may hold; CreateTopics and CreatePartitions beyond it are refused "
                      "(this engine's own config).",
    "max.request.partition.size.limit": "Most partitions one DescribeTopicPartitions response holds; the rest come "
                                        "through its cursor.",
    "message.max.bytes": "Largest record batch in bytes the broker accepts; the default of the topic config "
                         "max.message.bytes.",
    "min.insync.replicas": "Default of the topic config: with acks=all, a write fails unless at least this many "
                           "replicas are in sync.",
    "num.partitions": "Partitions of a topic created automatically or without a partition count.",
    "num.recovery.threads.per.data.dir": "Threads per log directory that recover and open logs at startup and flush "
                                         "them at shutdown.",
    "offset.metadata.max.bytes": "Largest metadata string in bytes a consumer may commit with an offset.",
    "offsets.commit.timeout.ms": "How long in ms an offset commit waits for the offsets topic's replicas before it "
                                 "fails.",
    "offsets.retention.check.interval.ms": "How often in ms the broker looks for committed offsets that have expired.",
    "offsets.retention.minutes": "How long in minutes committed offsets are kept after their group became empty (for "
                                 "a standalone consumer, after the commit).",
    "offsets.topic.num.partitions": "Number of partitions of the __consumer_offsets topic, fixed when it is created.",
    "offsets.topic.replication.factor": "Replication factor of the __consumer_offsets topic, fixed when it is "
                                        "created.",
    "offsets.topic.segment.bytes": "Segment size in bytes of the __consumer_offsets topic.",
    "producer.id.expiration.check.interval.ms": "How often in ms the broker looks for producer ids past "
                                                "producer.id.expiration.ms.",
    "producer.id.expiration.ms": "How long in ms the broker keeps the state of an idle idempotent producer; never "
                                 "while it has an open transaction.",
    "queued.max.request.bytes": "Bytes of requests the broker holds while reading and handling them before it "
                                "waits to read more; -1 (or 0) for no limit.",
    "quota.window.num": "Number of samples kept for client quota rates.",
    "quota.window.size.seconds": "Length in seconds of each sample of client quota rates.",
    "replica.fetch.backoff.ms": "How long in ms a follower waits before fetching again after a fetch error.",
    "replica.fetch.max.bytes": "Bytes a follower asks for per partition in each fetch (a larger first batch is still "
                               "returned).",
    "replica.fetch.response.max.bytes": "Most bytes a follower asks for in one whole fetch response.",
    "replica.fetch.wait.max.ms": "Longest time in ms a follower's fetch waits at the leader for new data.",
    "replica.high.watermark.checkpoint.interval.ms": "How often in ms a broker writes its partitions' high "
                                                     "watermarks to disk.",
    "replica.lag.time.max.ms": "A follower that has not caught up with the leader for this many ms is removed from "
                               "the ISR.",
    "sasl.server.max.receive.size": "Largest frame in bytes accepted from a connection before its SASL "
                                    "authentication has completed.",
    "share.coordinator.snapshot.update.records.per.snapshot": "ShareUpdate records written for a share partition "
                                                              "before its state is written again as a whole "
                                                              "ShareSnapshot.",
    "share.coordinator.state.topic.min.isr": "min.insync.replicas of the __share_group_state topic.",
    "share.coordinator.state.topic.num.partitions": "Number of partitions of the __share_group_state topic, fixed "
                                                    "when it is created.",
    "share.coordinator.state.topic.prune.interval.ms": "How often in ms __share_group_state is pruned of records "
                                                       "older than the snapshots still needed.",
    "share.coordinator.state.topic.replication.factor": "Replication factor of the __share_group_state topic, fixed "
                                                        "when it is created.",
    "share.coordinator.state.topic.segment.bytes": "Segment size in bytes of the __share_group_state topic.",
    "share.coordinator.write.timeout.ms": "How long in ms a share state write waits for the state topic's replicas "
                                          "before it fails.",
    "socket.request.max.bytes": "Largest request in bytes the broker reads from a socket; a bigger one closes the "
                                "connection.",
    "super.users": "Principals allowed every operation whatever the ACLs, separated by semicolons (e.g. "
                   "User:admin;User:ops).",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "How often in ms the transaction coordinator "
                                                                   "aborts transactions past their timeout.",
    "transaction.max.timeout.ms": "Longest transaction timeout in ms a producer may ask for; a longer one is refused.",
    "transaction.partition.verification.enable": "Check that a transactional batch's partition was added to the "
                                                 "producer's transaction before appending it.",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "How often in ms transactional ids past "
                                                                  "transactional.id.expiration.ms are removed.",
    "transaction.state.log.min.isr": "min.insync.replicas of the __transaction_state topic.",
    "transaction.state.log.num.partitions": "Number of partitions of the __transaction_state topic, fixed when it is "
                                            "created.",
    "transaction.state.log.replication.factor": "Replication factor of the __transaction_state topic, fixed when it "
                                                "is created.",
    "transaction.state.log.segment.bytes": "Segment size in bytes of the __transaction_state topic.",
    "transactional.id.expiration.ms": "How long in ms a transactional id may stay unused before the coordinator "
                                      "forgets it.",
    "unclean.leader.election.enable": "Default of the topic config: let a replica that is not in sync become leader, "
                                      "accepting data loss to stay available.",
}

GROUP_CONFIG_DOCS: dict[str, str] = {
    "consumer.heartbeat.interval.ms": "Heartbeat interval in ms for this consumer group's members, within the "
                                      "broker's group.consumer min and max.",
    "consumer.session.timeout.ms": "A member of this consumer group that sends no heartbeat for this many ms is "
                                   "removed from it.",
    "share.auto.offset.reset": "Where this share group starts on a partition it has no position for: latest, "
                               "earliest, or by_duration:<ISO-8601 duration>.",
    "share.delivery.count.limit": "Times a record is delivered to this share group before it is archived and no "
                                  "longer offered (2-10).",
    "share.heartbeat.interval.ms": "Heartbeat interval in ms for this share group's members, within the broker's "
                                   "group.share min and max.",
    "share.isolation.level": "read_committed delivers only committed transactional records; read_uncommitted "
                             "delivers every record.",
    "share.partition.max.record.locks": "Most records of one partition this share group may hold acquired and "
                                        "unacknowledged at once (100-10000).",
    "share.record.lock.duration.ms": "How long in ms a member of this share group holds acquired records before they "
                                     "can be delivered again.",
    "share.session.timeout.ms": "A member of this share group that sends no heartbeat for this many ms is removed "
                                "and its records released.",
}


def topic_config_doc(name: str) -> str | None:
    """The line for a topic config (or, failing that, a broker config of that name), else None."""
    return TOPIC_CONFIG_DOCS.get(name) or BROKER_CONFIG_DOCS.get(name)


def broker_config_doc(name: str) -> str | None:
    """The line for a broker config (or, failing that, a topic config of that name), else None."""
    return BROKER_CONFIG_DOCS.get(name) or TOPIC_CONFIG_DOCS.get(name)


def group_config_doc(name: str) -> str | None:
    """The line for a group config (set on a GROUP resource), else None."""
    return GROUP_CONFIG_DOCS.get(name)
