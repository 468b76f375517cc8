"""What OffsetCommit (k08) and TxnOffsetCommit (k28) share: the per-partition checks of a
commit request, in Kafka's order, and the shape of their answers, both in slices of the
event loop (engine/cluster/slices.py): a request may name a million partitions."""
from __future__ import annotations

import kafka.errors as Errors

from engine.cluster import slices
from engine.coordinator.offsets_records import OffsetAndMetadata

TopicPartitionKey = tuple[str, int]


async def checked_offsets(broker, topics, *, with_leader_epoch: bool, now: int, expire_at: int = -1
                    ) -> tuple[dict[TopicPartitionKey, int], dict[TopicPartitionKey, OffsetAndMetadata]]:
    """Each partition's error code (UNKNOWN_TOPIC_OR_PARTITION, then OFFSET_METADATA_TOO_LARGE
    beyond offset.metadata.max.bytes, else 0), and the offsets to store for those without one."""
    max_metadata = broker.config.get("offset.metadata.max.bytes")
    errors: dict[TopicPartitionKey, int] = {}
    offsets: dict[TopicPartitionKey, OffsetAndMetadata] = {}
    with slices.Pacer() as pacer:
        for topic in topics:
            for p in topic.partitions:
                tp, metadata = (topic.name, p.partition_index), p.committed_metadata or ""
                if broker.image.partition(*tp) is None:
                    errors[tp] = Errors.UnknownTopicOrPartitionError.errno
                elif len(metadata.encode()) > max_metadata:
                    errors[tp] = Errors.OffsetMetadataTooLargeError.errno
                else:
                    errors[tp] = 0
                    leader_epoch = p.committed_leader_epoch if with_leader_epoch else -1
                    offsets[tp] = OffsetAndMetadata(p.committed_offset, leader_epoch, metadata, now, expire_at)
                await pacer.tick()
    return errors, offsets


def deny_topics(errors: dict[TopicPartitionKey, int], offsets: dict[TopicPartitionKey, OffsetAndMetadata],
                allowed: set[str]) -> None:
    """Partitions of topics outside `allowed` get TOPIC_AUTHORIZATION_FAILED and are not stored."""
    for tp in list(errors):
        if tp[0] not in allowed:
            errors[tp] = Errors.TopicAuthorizationFailedError.errno
            offsets.pop(tp, None)


async def topic_answers(topics, errors: dict[TopicPartitionKey, int], topic_response, partition_response) -> list:
    """The answer's topics, in the request's order, each partition with its error code."""
    return await slices.map_sliced(topics, lambda topic: topic_response(name=topic.name, partitions=[
        partition_response(partition_index=p.partition_index, error_code=errors[(topic.name, p.partition_index)])
        for p in topic.partitions]))
