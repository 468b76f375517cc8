"""What OffsetCommit (k08) and TxnOffsetCommit (k28) share: the per-partition checks of a
commit request, in Kafka's order, and the shape of their answers, both in slices of the
event loop (engine/cluster/slices.py): a request may name a million partitions.

Each entry of the request is answered on its own, as Kafka's OffsetMetadataManager does: a
partition named twice gets two answers, and the last valid entry is the one stored."""
from __future__ import annotations

from dataclasses import dataclass, field

import kafka.errors as Errors

from engine.cluster import slices
from engine.coordinator.offsets_records import OffsetAndMetadata

TopicPartitionKey = tuple[str, int]


@dataclass
class Commit:
    entries: list[list] = field(default_factory=list)    # [(topic, partition), error code], in request order
    offsets: dict[TopicPartitionKey, OffsetAndMetadata] = field(default_factory=dict)   # to store

    def refuse_all(self, code: int) -> None:
        """A group-level refusal before anything is stored: every entry gets `code`."""
        for entry in self.entries:
            entry[1] = code
        self.offsets = {}

    def deny_topics(self, allowed: set[str]) -> None:
        """Entries of topics outside `allowed` get TOPIC_AUTHORIZATION_FAILED and are not stored."""
        for entry in self.entries:
            if entry[0][0] not in allowed:
                entry[1] = Errors.TopicAuthorizationFailedError.errno
                self.offsets.pop(entry[0], None)

    def fail_stored(self, code: int) -> None:
        """The coordinator refused the offsets: the entries that were to be stored get `code`."""
        for entry in self.entries:
            if entry[1] == 0:
                entry[1] = code


def java_length(text: str) -> int:
    """The length Kafka compares with offset.metadata.max.bytes: Java's String.length(), in
    UTF-16 code units (a character outside the Basic Multilingual Plane counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


async def checked_offsets(broker, topics, *, with_leader_epoch: bool, now: int, expire_at: int = -1) -> Commit:
    """Each entry's error code (UNKNOWN_TOPIC_OR_PARTITION, then OFFSET_METADATA_TOO_LARGE
    beyond offset.metadata.max.bytes, counted as Kafka counts it, else 0), and the offsets to store of those without one."""
    max_metadata = broker.config.get("offset.metadata.max.bytes")
    commit = Commit()
    with slices.Pacer() as pacer:
        for topic in topics:
            for p in topic.partitions:
                tp, metadata = (topic.name, p.partition_index), p.committed_metadata or ""
                if broker.image.partition(*tp) is None:
                    commit.entries.append([tp, Errors.UnknownTopicOrPartitionError.errno])
                elif java_length(metadata) > max_metadata:
                    commit.entries.append([tp, Errors.OffsetMetadataTooLargeError.errno])
                else:
                    commit.entries.append([tp, 0])
                    leader_epoch = p.committed_leader_epoch if with_leader_epoch else -1
                    commit.offsets[tp] = OffsetAndMetadata(p.committed_offset, leader_epoch, metadata, now, expire_at)
                await pacer.tick()
    return commit


async def topic_answers(topics, commit: Commit, topic_response, partition_response) -> list:
    """The answer's topics, in the request's order, each entry with its error code."""
    codes = iter(code for _, code in commit.entries)
    return await slices.map_sliced(topics, lambda topic: topic_response(name=topic.name, partitions=[
        partition_response(partition_index=p.partition_index, error_code=next(codes)) for p in topic.partitions]))
