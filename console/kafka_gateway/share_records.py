"""What the share group calls of `console.kafka_gateway.share_groups` return (frozen dataclasses)."""
from __future__ import annotations

from dataclasses import dataclass, field

TopicPartitionKey = tuple[str, int]


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    rack_id: str | None
    client_id: str
    client_host: str
    member_epoch: int
    subscribed_topics: tuple[str, ...]
    assignment: tuple[TopicPartitionKey, ...]


@dataclass(frozen=True)
class ShareGroupInfo:
    """ShareGroupDescribe's answer for one group (KIP-932)."""

    group_id: str
    state: str                        # Empty, Stable (Dead once deleted)
    group_epoch: int
    assignment_epoch: int
    assignor: str
    coordinator: int
    members: tuple[ShareMember, ...]
    error: str | None = None          # in words, with Kafka's error name and code


@dataclass(frozen=True)
class ShareOffset:
    """DescribeShareGroupOffsets for one share partition: start offset -1 when it has no state;
    lag None when the cluster does not tell it (v0) or does not know it."""

    topic: str
    partition: int
    start_offset: int
    leader_epoch: int
    lag: int | None
    error: str | None = None


@dataclass(frozen=True)
class ShareGroupOffsets:
    offsets: dict[str, list[ShareOffset]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SharePartitionStats:
    """A share partition as its leader holds it, from the bundled engine's admin interface
    (Kafka offers these only as broker metrics): counts of the records in flight by state,
    and counters since the broker became the partition's leader."""

    group_id: str
    topic: str
    partition: int
    broker: int
    start_offset: int
    end_offset: int
    high_watermark: int
    available: int
    acquired: int
    acknowledged: int
    archived: int
    in_flight: int
    deliveries: int
    lock_expiries: int
    archived_total: dict[str, int]
