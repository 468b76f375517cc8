"""What the three config APIs share: resolving a resource and turning changes into overrides.

Resource types are Kafka's: TOPIC=2, BROKER=4 (name "" is the cluster-wide default).
"""
from __future__ import annotations

from typing import Any

import kafka.errors as Errors

from engine.config import BROKER_CONFIGS, TOPIC_CONFIGS, TYPE_LIST, config_value_string, effective_topic_config
from engine.errors import ApiError

TOPIC = 2
BROKER = 4
# IncrementalAlterConfigs operations (KIP-339).
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def describe(broker, resource_type: int, name: str) -> list[tuple[str, str | None, int, bool, int]]:
    """(name, value, source, read_only, type) for every config of a topic or broker."""
    if resource_type == TOPIC:
        state = broker.image.topics.get(name)
        if state is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError, f"Topic {name} does not exist")
        return [(key, config_value_string(value), source, False, TOPIC_CONFIGS[key].type)
                for key, (value, source) in effective_topic_config(state.configs, broker.config).items()]
    if resource_type == BROKER:
        config = _broker_config(broker, name)
        entries = [(key, config_value_string(config.get(key)), config.source(key), False, d.type)
                   for key, d in BROKER_CONFIGS.items()]
        node = broker.image.brokers[int(name)] if name else None
        if node is not None:
            entries += [("broker.id", str(node.node_id), 4, True, 3),
                        ("listeners", f"PLAINTEXT://{node.host}:{node.port}", 4, True, 2),
                        ("log.dirs", str(broker.log_dir if node.node_id == broker.node_id else ""), 4, True, 2)]
        return entries
    raise ApiError(Errors.InvalidRequestError, f"Unsupported resource type {resource_type}")


def _broker_config(broker, name: str):
    if not name:
        return broker.controller.broker_config_for(-1)
    try:
        node_id = int(name)
    except ValueError:
        raise ApiError(Errors.InvalidRequestError, f"Broker id must be an integer, got {name!r}") from None
    if node_id not in broker.image.brokers:
        raise ApiError(Errors.InvalidRequestError, f"Unknown broker {node_id}")
    return broker.controller.broker_config_for(node_id)


def current_overrides(broker, resource_type: int, name: str) -> dict[str, Any]:
    if resource_type == TOPIC:
        state = broker.image.topics.get(name)
        if state is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError, f"Topic {name} does not exist")
        return dict(state.configs)
    if resource_type == BROKER:
        _broker_config(broker, name)
        return dict(broker.image.broker_configs.get(name, {}))
    raise ApiError(Errors.InvalidRequestError, f"Unsupported resource type {resource_type}")


def apply_incremental(current: dict[str, Any], operations: list[tuple[str, int, str | None]],
                      definitions: dict) -> dict[str, Any | None]:
    """Changes (name -> value, None to delete) from KIP-339 operations."""
    changes: dict[str, Any | None] = {}
    for key, op, value in operations:
        if key not in definitions:
            raise ApiError(Errors.InvalidConfigurationError, f"Unknown config name: {key}")
        if op == SET:
            changes[key] = value
        elif op == DELETE:
            changes[key] = None
        elif op in (APPEND, SUBTRACT):
            if definitions[key].type != TYPE_LIST:
                raise ApiError(Errors.InvalidConfigurationError, f"Config {key} is not a list; cannot APPEND/SUBTRACT")
            items = [i for i in str(changes.get(key, current.get(key, definitions[key].default)) or "").split(",") if i]
            for item in (value or "").split(","):
                if op == APPEND and item and item not in items:
                    items.append(item)
                elif op == SUBTRACT and item in items:
                    items.remove(item)
            changes[key] = ",".join(items)
        else:
            raise ApiError(Errors.InvalidRequestError, f"Unknown config operation {op}")
    return changes


def alter(broker, resource_type: int, name: str, changes: dict[str, Any | None], validate_only: bool) -> None:
    controller = broker.controller
    if resource_type == TOPIC:
        controller.alter_topic_configs(name, changes, validate_only=validate_only)
    elif resource_type == BROKER:
        _broker_config(broker, name)
        controller.alter_broker_configs(name, changes, validate_only=validate_only)
    else:
        raise ApiError(Errors.InvalidRequestError, f"Unsupported resource type {resource_type}")


def definitions_for(resource_type: int) -> dict:
    return TOPIC_CONFIGS if resource_type == TOPIC else BROKER_CONFIGS
