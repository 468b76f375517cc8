"""Group configs (KIP-848): a consumer group's own session timeout and heartbeat interval.

They live in the metadata log as config records on the GROUP resource (type 32), as Kafka
keeps them, may be set before the group exists, and outlive it. Unset, each falls back to the
broker config it overrides. Gaps: Kafka's `share.*` group configs (there are no share groups)
and its bounds `group.consumer.min/max.*` (the engine has none: any value of at least 1 ms).
"""
from __future__ import annotations

from typing import Any, Callable

from engine.config import TYPE_INT, ConfigDef, InvalidConfigError, at_least

GROUP = 32
SOURCE_GROUP_CONFIG = 8     # Kafka's ConfigSource.GROUP_CONFIG

GROUP_CONFIGS = {d.name: d for d in (
    ConfigDef("consumer.session.timeout.ms", TYPE_INT, 45000, at_least(1), ("group.consumer.session.timeout.ms",)),
    ConfigDef("consumer.heartbeat.interval.ms", TYPE_INT, 5000, at_least(1),
              ("group.consumer.heartbeat.interval.ms",)),
)}


def validate_group_configs(changes: dict[str, Any | None]) -> dict[str, Any]:
    """The parsed values of `changes` (None deletes); InvalidConfigError with Kafka's sentence."""
    for key in changes:
        if key not in GROUP_CONFIGS:
            raise InvalidConfigError(f"Unknown group config name: {key}")
    return {key: GROUP_CONFIGS[key].parse(value) for key, value in changes.items() if value is not None}


def group_config(overrides: dict[str, Any], key: str, broker_config: Callable[[str], Any]) -> tuple[Any, bool]:
    """A group's value of `key` and whether the group overrides it."""
    if key in overrides:
        return overrides[key], True
    return broker_config(GROUP_CONFIGS[key].synonyms[0]), False
