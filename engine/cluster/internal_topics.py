"""What the admin APIs may do to the internal topics, `__consumer_offsets`, `__transaction_state`
and `__share_group_state` (Kafka's Topic.INTERNAL_TOPICS).

They hold the coordinators' state: committed offsets and group metadata, transaction state,
share partitions' states. A coordinator finds the partition of a group id or transactional id
as `hash % count`, with the configured count (`offsets.topic.num.partitions`,
`transaction.state.log.num.partitions`, fixed at start, as in Kafka), never the topic's live
one: so nothing a client does to the topic can move a group's offsets to a partition where they
are not. The share coordinator maps a share partition's key over `__share_group_state`'s
partitions, whose count therefore never changes either.

Per API (docs/engine/reliability.md has the same table, with Kafka's answers beside):
- CreatePartitions: any change of the partition count is refused, INVALID_REQUEST with a
  sentence (validate_only too). Kafka allows it, and every group whose partition moves loses
  its committed offsets.
- AlterConfigs / IncrementalAlterConfigs: allowed, as in Kafka, except that the effective
  `cleanup.policy` of the two compacted ones must stay `compact` (INVALID_CONFIG): with
  `delete`, retention would delete committed offsets and transaction state. A legacy
  AlterConfigs that leaves `cleanup.policy` out would reset it to the broker default
  (`delete`), so it is refused the same way. `__share_group_state` is not compacted (the
  share coordinator prunes it itself), and its configs change as Kafka lets them.
- DeleteRecords: refused, INVALID_TOPIC_EXCEPTION "Cannot delete records of internal topic
  ...", Kafka's answer (ReplicaManager.deleteRecordsOnLocalLog).
- DeleteTopics and CreateTopics: refused, INVALID_REQUEST (k20/k19); Produce:
  INVALID_TOPIC_EXCEPTION (k00), as Kafka refuses client appends to them. Metadata's
  auto-creation makes them with their coordinators' settings (k03). A topic whose name differs
  from one of them only by '.' versus '_' is refused, INVALID_TOPIC_EXCEPTION (topics.py):
  Kafka's collision rule would otherwise keep the internal topic from ever being created.
- AlterPartitionReassignments and ElectLeaders: allowed, as in Kafka: the data moves with the
  replicas, and the new leader's coordinator loads the partition.
"""
from __future__ import annotations

import logging
from typing import Any

import kafka.errors as Errors

from engine.errors import ApiError

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
TXN_TOPIC = "__transaction_state"
SHARE_STATE_TOPIC = "__share_group_state"
# The config naming each internal topic's partition count, and what its partitions hold.
PARTITION_COUNT = {OFFSETS_TOPIC: ("offsets.topic.num.partitions", "group", "committed offsets"),
                   TXN_TOPIC: ("transaction.state.log.num.partitions", "transactional id", "transaction state"),
                   SHARE_STATE_TOPIC: ("share.coordinator.state.topic.num.partitions", "share partition",
                                       "share state")}
INTERNAL_TOPICS = frozenset(PARTITION_COUNT)
COMPACTED_TOPICS = frozenset({OFFSETS_TOPIC, TXN_TOPIC})


def partition_count(name: str, broker_config) -> int:
    """The partition count the coordinator maps ids with: the configured one."""
    return broker_config.get(PARTITION_COUNT[name][0])


def report_count_mismatch(name: str, image, broker_config) -> None:
    """Log, once per process, an internal topic whose partition count is not the configured
    one (the config was changed between two starts): ids map to the configured count, so
    some find no coordinator (COORDINATOR_NOT_AVAILABLE) and others a partition without their
    state, until the config is set back."""
    topic = image.topics.get(name)
    if topic is None:
        return
    live, configured = len(topic.partitions), partition_count(name, broker_config)
    if live == configured or (name, live, configured) in _REPORTED:
        return
    _REPORTED.add((name, live, configured))
    config, key, state = PARTITION_COUNT[name]
    log.error("%s has %d partitions but %s is %d: each %s maps to one of %d partitions, so some have no "
              "coordinator and others are looked for in a partition without their %s; set %s=%d again", name,
              live, config, configured, key, configured, state, config, live)


_REPORTED: set[tuple[str, int, int]] = set()


def check_partition_count_change(name: str, broker_config) -> None:
    if name not in INTERNAL_TOPICS:
        return
    config, key, state = PARTITION_COUNT[name]
    raise ApiError(Errors.InvalidRequestError,
                   f"Cannot change the partition count of internal topic {name}: its coordinator maps each {key} "
                   f"to one of {partition_count(name, broker_config)} partitions ({config}), so a {key} would "
                   f"move to a partition without its {state}.")


def check_topic_configs(name: str, overrides: dict[str, Any], changes: dict[str, Any | None], broker_config) -> None:
    """`changes` (None: back to the default) to `overrides` of topic `name`, validated already."""
    if name not in COMPACTED_TOPICS:
        return
    policy = changes["cleanup.policy"] if "cleanup.policy" in changes else overrides.get("cleanup.policy")
    if policy is None:
        policy = broker_config.get("log.cleanup.policy")
    if _policies(policy) != ["compact"]:
        raise ApiError(Errors.InvalidConfigurationError,
                       f"Internal topic {name} must stay compacted: cleanup.policy={','.join(_policies(policy))} "
                       f"would let retention delete its {PARTITION_COUNT[name][2]}.")


def check_delete_records(name: str) -> None:
    if name in INTERNAL_TOPICS:
        raise ApiError(Errors.InvalidTopicError, f"Cannot delete records of internal topic {name}")


def _policies(value) -> list[str]:
    parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return sorted(p.strip() for p in parts if p.strip())
