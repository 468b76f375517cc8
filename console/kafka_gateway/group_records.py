"""What the consumer group calls of `console.kafka_gateway.groups` return (plain frozen dataclasses).

`TopicPartitionKey` is a plain `(topic, partition)` tuple everywhere: cheap to build by the
ten thousand and usable as a dict key.
"""
from __future__ import annotations

from dataclasses import dataclass, field

TopicPartitionKey = tuple[str, int]

# ListOffsets' special timestamps (KIP-79): the log start offset and the high watermark.
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1


@dataclass(frozen=True)
class GroupListing:
    """A group as ListGroups names it: the broker that listed it is its coordinator."""

    group_id: str
    state: str                       # "" from brokers before ListGroups v4 (KIP-518)
    protocol_type: str               # "consumer" for Kafka consumers; "" for offsets-only groups
    listed_by: int
    group_type: str = ""             # "classic" or "consumer" (KIP-848) from ListGroups v5; "" before


@dataclass(frozen=True)
class Coordinators:
    """FindCoordinator answers: {group id: broker id}, and why the others have none."""

    found: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    group_instance_id: str | None    # static membership (KIP-345)
    client_id: str
    client_host: str
    subscribed_topics: tuple[str, ...] = ()          # decoded ConsumerProtocolSubscription
    assignment: tuple[TopicPartitionKey, ...] = ()    # decoded ConsumerProtocolAssignment
    undecodable: bool = False        # a consumer-protocol group whose bytes did not decode
    # In a KIP-848 group: "classic" or "consumer", the protocol the member speaks (ConsumerGroupDescribe
    # v1, KIP-1099); "" when the cluster does not say.
    protocol: str = ""


@dataclass(frozen=True)
class DescribedGroup:
    group_id: str
    state: str                       # Stable, PreparingRebalance, CompletingRebalance, Empty, Dead
    protocol_type: str
    protocol: str                    # the chosen assignor (range, roundrobin, cooperative-sticky ...)
    coordinator: int
    members: tuple[GroupMember, ...]
    error: str | None = None         # DescribeGroups' error for this group, in words
    group_type: str = "classic"      # "consumer": a KIP-848 group, from ConsumerGroupDescribe

    @property
    def is_known(self) -> bool:
        """False for a group the coordinator does not know (Dead, no members, or GROUP_ID_NOT_FOUND)."""
        return self.error is None and not (self.state == "Dead" and not self.members)


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str


@dataclass(frozen=True)
class GroupOffsets:
    """OffsetFetch answers: {group id: {(topic, partition): CommittedOffset}}, and group errors."""

    offsets: dict[str, dict[TopicPartitionKey, CommittedOffset]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LogOffsets:
    """ListOffsets answers for one timestamp: {(topic, partition): offset}; offset -1 when no
    record matches a timestamp. Partitions whose leader failed are in `errors`."""

    offsets: dict[TopicPartitionKey, int] = field(default_factory=dict)
    errors: dict[TopicPartitionKey, str] = field(default_factory=dict)
