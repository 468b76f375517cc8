"""What the three config APIs share: resolving a resource and turning changes into overrides.

Resource types are Kafka's: TOPIC=2, BROKER=4 (name "" is the cluster-wide default), GROUP=32
(dynamic group configs, engine/coordinator/group_configs.py).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import kafka.errors as Errors

from engine.config import (BROKER_CONFIGS, SOURCE_DEFAULT, SOURCE_DYNAMIC_BROKER, SOURCE_DYNAMIC_DEFAULT_BROKER,
                           SOURCE_DYNAMIC_TOPIC, SOURCE_STATIC_BROKER, TOPIC_CONFIGS, TYPE_INT, TYPE_LIST, TYPE_STRING, config_value_string,
                           effective_topic_config)
from engine.coordinator.group_configs import GROUP_CONFIGS, GROUP_RESOURCE, SOURCE_GROUP
from engine.dynamic_config import config_type_of, is_read_only, is_sensitive, kafka_only_dynamic_configs
from engine.errors import ApiError

TOPIC = 2
BROKER = 4
GROUP = GROUP_RESOURCE
# Read-only, this engine's own (Kafka has it only as the JMX gauge uncleanable-partitions-count
# and the log): the partitions the log cleaner gave up on, "topic-partition" comma-separated.
UNCLEANABLE_PARTITIONS = "engine.log.cleaner.uncleanable.partitions"
TYPE_UNKNOWN = 0
# IncrementalAlterConfigs operations (KIP-339).
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


class Described(NamedTuple):
    """One DescribeConfigs entry; synonyms are (name, value, source), highest precedence first."""
    name: str
    value: str | None
    source: int
    read_only: bool
    type: int
    synonyms: list[tuple[str, str | None, int]]
    sensitive: bool = False   # the value (and its synonyms' values) is withheld


def describe(broker, resource_type: int, name: str) -> list[Described]:
    """Every config of a topic or broker, with its effective value, source and synonyms."""
    if resource_type == TOPIC:
        state = broker.image.topics.get(name)
        if state is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError, f"Topic {name} does not exist")
        return [Described(key, config_value_string(value), source, False, TOPIC_CONFIGS[key].type,
                          _topic_synonyms(key, state.configs, broker.config))
                for key, (value, source) in effective_topic_config(state.configs, broker.config).items()]
    if resource_type == BROKER:
        config = _broker_config(broker, name)
        if not name:
            # As Kafka: the cluster-wide resource lists only what was set on it.
            return [_stored(key, [(value, SOURCE_DYNAMIC_DEFAULT_BROKER)]) for key, value in config.dynamic_default.items()]
        entries = [Described(key, config_value_string(config.get(key)), config.source(key), is_read_only(key), d.type,
                             _strings(config.synonyms((key,))), is_sensitive(key))
                   for key, d in BROKER_CONFIGS.items()]
        # Dynamic configs the engine does not act on (SASL, thread pools ...), custom ones, and
        # per-listener forms (`listener.name.<l>.max.connection.creation.rate`, static ones too).
        others = {key: [(layer[key], source) for layer, source in ((config.dynamic, SOURCE_DYNAMIC_BROKER),
                                                                   (config.dynamic_default, SOURCE_DYNAMIC_DEFAULT_BROKER),
                                                                   (config.static, SOURCE_STATIC_BROKER))
                        if key in layer]
                  for key in [*config.dynamic, *config.dynamic_default, *config.static] if key not in BROKER_CONFIGS}
        entries += [_stored(key, values) for key, values in others.items()]
        entries += [_kafka_default(key, config_type, default)
                    for key, config_type, default in kafka_only_dynamic_configs() if key not in others]
        node = broker.image.brokers[int(name)]
        local = node.node_id == broker.node_id
        entries += [_one_source("broker.id", node.node_id, TYPE_INT),
                    _one_source("listeners", ",".join(f"{name}://{host}:{port}" for name, host, port in node.endpoints)
                                or f"PLAINTEXT://{node.host}:{node.port}", TYPE_STRING),
                    _one_source("log.dirs", broker.log_dir if local else "", TYPE_STRING)]
        if getattr(broker, "admin_endpoint", None):   # absent, as on Apache Kafka, without the interface
            entries.append(_one_source("engine.admin.endpoint", broker.admin_endpoint, TYPE_STRING))
        cleaner = getattr(broker, "log_cleaner", None)
        if local and cleaner is not None:
            entries.append(_one_source(UNCLEANABLE_PARTITIONS, ",".join(
                f"{topic}-{index}" for topic, index in cleaner.uncleanable_partitions), TYPE_LIST))
        return entries
    if resource_type == GROUP:
        return _group_configs(broker, name)
    raise ApiError(Errors.InvalidRequestError, f"Unsupported resource type {resource_type}")


def _group_configs(broker, group_id: str) -> list[Described]:
    """Every group config: the group's override (GROUP_CONFIG), else the broker config it
    shadows, with that config's source, as Kafka describes a group."""
    if not group_id:
        raise ApiError(Errors.InvalidRequestError, "Group id must not be empty")
    overrides = broker.image.group_configs.get(group_id, {})
    entries = []
    for key, (definition, shadowed, _) in GROUP_CONFIGS.items():
        below = _strings(broker.config.synonyms((shadowed,))) if shadowed else \
            [(key, config_value_string(definition.default), SOURCE_DEFAULT)]
        own = [(key, config_value_string(overrides[key]), SOURCE_GROUP)] if key in overrides else []
        synonyms = own + below
        value, source = (synonyms[0][1], synonyms[0][2]) if synonyms else (None, SOURCE_DEFAULT)
        entries.append(Described(key, value, source, False, definition.type, synonyms))
    return entries


def _topic_synonyms(key: str, overrides: dict[str, Any], config) -> list[tuple[str, str | None, int]]:
    """As Kafka: the topic's own override, then the broker configs it falls back to."""
    own = [(key, overrides[key], SOURCE_DYNAMIC_TOPIC)] if key in overrides else []
    return _strings(own + config.synonyms(TOPIC_CONFIGS[key].synonyms))


def _stored(key: str, values: list[tuple[Any, int]]) -> Described:
    """A config with no definition of ours; `values` by precedence, as (value, source)."""
    sensitive = is_sensitive(key)
    synonyms = [(key, None if sensitive else config_value_string(value), source) for value, source in values]
    return Described(key, synonyms[0][1], synonyms[0][2], is_read_only(key), config_type_of(key) or TYPE_UNKNOWN,
                     synonyms, sensitive)


def _kafka_default(key: str, config_type: int, default: Any) -> Described:
    """A run-time config of Kafka's the engine does not act on, at Kafka's default."""
    value = config_value_string(default)
    sensitive = is_sensitive(key)
    synonyms = [] if default is None else [(key, None if sensitive else value, SOURCE_DEFAULT)]
    return Described(key, None if sensitive else value, SOURCE_DEFAULT, False, config_type, synonyms, sensitive)


def _one_source(key: str, value: Any, config_type: int, source: int = SOURCE_STATIC_BROKER,
                read_only: bool = True) -> Described:
    """A value with one source only, so its one synonym is itself."""
    value = config_value_string(value)
    return Described(key, value, source, read_only, config_type, [(key, value, source)])


def _strings(synonyms: list[tuple[str, Any, int]]) -> list[tuple[str, str | None, int]]:
    return [(key, config_value_string(value), source) for key, value, source in synonyms]


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
    if resource_type == GROUP:
        return dict(broker.image.group_configs.get(name, {}))
    raise ApiError(Errors.InvalidRequestError, f"Unsupported resource type {resource_type}")


def apply_incremental(current: dict[str, Any], operations: list[tuple[str, int, str | None]],
                      definitions: dict) -> dict[str, Any | None]:
    """Changes (name -> value, None to delete) from KIP-339 operations.

    Names and values are checked by the controller when the changes are applied; here only
    what the operations themselves need. APPEND/SUBTRACT start from the override, else from
    the config's own default (not a broker's), as Kafka's ConfigAdminManager does."""
    changes: dict[str, Any | None] = {}
    keys = [key for key, _, _ in operations]
    if len(set(keys)) != len(keys):
        raise ApiError(Errors.InvalidRequestError, "Error due to duplicate config keys")
    for key, op, value in operations:
        if op == SET:
            changes[key] = value
        elif op == DELETE:
            changes[key] = None
        elif op in (APPEND, SUBTRACT):
            definition = definitions.get(key)
            if definition is None or definition.type != TYPE_LIST:
                verb = "append" if op == APPEND else "subtract"
                raise ApiError(Errors.InvalidConfigurationError,
                               f"Config value {verb} is not allowed for config key: {key}")
            items = [i for i in str(current.get(key, definition.default) or "").split(",") if i]
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
    elif resource_type == GROUP:
        controller.alter_group_configs(name, changes, validate_only=validate_only)
    else:
        raise ApiError(Errors.InvalidRequestError, f"Unsupported resource type {resource_type}")


def definitions_for(resource_type: int) -> dict:
    if resource_type == GROUP:
        return {name: definition for name, (definition, _, _) in GROUP_CONFIGS.items()}
    return TOPIC_CONFIGS if resource_type == TOPIC else BROKER_CONFIGS
