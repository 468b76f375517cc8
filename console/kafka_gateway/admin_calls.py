"""The gateway's config and record-deletion requests, built and sent by us (see client.py's
docstring for the connection manager they go through):

- DescribeConfigs with synonyms and documentation, for a topic or a broker, and each entry's
  default (what applies without the resource's own override);
- IncrementalAlterConfigs on a topic, a broker or the cluster-wide broker default (""), with
  `validate_only` for the previews: kafka-python's alter_configs refuses the "" resource;
- DeleteRecords, one request per partition leader, every refused partition named by its error:
  kafka-python's call folds several refusals into one untyped string.

Every refusal is a GatewayError whose message is console.errors.kafka_sentence.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import kafka.errors as Errors
from kafka import KafkaAdminClient
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType
from kafka.protocol.admin import DeleteRecordsRequest, DescribeConfigsRequest

from console.kafka_gateway import wire
from console.kafka_gateway.errors import GatewayError, error_for_code
from console.kafka_gateway.records import ConfigEntry, TopicInfo

TOPIC_OVERRIDE = "DYNAMIC_TOPIC_CONFIG"
BROKER_OVERRIDE = "DYNAMIC_BROKER_CONFIG"


def config_details(admin: KafkaAdminClient, resource_type: ConfigResourceType, name: str, *,
                   own_source: str) -> list[ConfigEntry]:
    """Every config of the resource, sorted by name; `own_source` is the source of the
    resource's own overrides (their `default_value` is what applies without them). A broker's
    configs are asked of that broker, as Kafka's admin client does: only it knows its local ones."""
    manager = admin._manager
    request = DescribeConfigsRequest(resources=[(resource_type, name, None)], include_synonyms=True,
                                     include_documentation=True)
    [response] = manager.run(wire.send_all, manager, [(_node_of(resource_type, name), request)])
    if isinstance(response, Exception):
        raise response
    for result in response.results:
        if result.error_code:
            raise error_for_code(result.error_code, result.error_message)
    answer = KafkaAdminClient._describe_configs_process_responses([response], "all")
    entries = answer.get(resource_type.name.lower(), {}).get(name, {})
    return sorted((config_entry(key, e, own_source=own_source) for key, e in entries.items()), key=lambda c: c.name)


def config_entry(name: str, raw: dict, *, own_source: str = TOPIC_OVERRIDE) -> ConfigEntry:
    source = raw.get("config_source", "UNKNOWN")
    # Synonyms come highest precedence first; the first one not set on the resource itself is
    # what it would have without its override.
    below = [s for s in raw.get("synonyms") or () if s.get("source") != own_source]
    default = below[0].get("value") if below else (raw.get("value") if source != own_source else None)
    default_from = below[0].get("name") if below else (name if source != own_source else None)
    config_type = raw.get("config_type")
    return ConfigEntry(name=name, value=raw.get("value"), source=source, is_default=source == "DEFAULT_CONFIG",
                       read_only=bool(raw.get("read_only")), is_sensitive=bool(raw.get("is_sensitive")),
                       default_value=default, default_from=default_from,
                       documentation=raw.get("documentation") or None,
                       config_type=config_type if config_type not in (None, "UNKNOWN") else None)


def alter_configs(admin: KafkaAdminClient, resource_type: ConfigResourceType, name: str, *, set_configs: Mapping[str, str],
                  delete: Iterable[str], validate_only: bool, what: str) -> None:
    """IncrementalAlterConfigs SET and DELETE on one resource; a broker's own resource goes to
    that broker, as Kafka's admin client sends it. The broker checks names and values and says
    why in its own words (`what` names the change in the sentence)."""
    changes: dict[str, object] = {key: str(value) for key, value in set_configs.items()}
    changes.update({key: (AlterConfigOp.DELETE, None) for key in delete})
    if not changes:
        return
    request = KafkaAdminClient._alter_configs_request([ConfigResource(resource_type, name, changes)],
                                                      validate_only=validate_only, incremental=True)
    manager = admin._manager
    [response] = manager.run(wire.send_all, manager, [(_node_of(resource_type, name), request)])
    if isinstance(response, Exception):
        raise response
    for result in response.responses:
        if result.error_code:
            raise error_for_code(result.error_code, result.error_message, what=what)


def _node_of(resource_type: ConfigResourceType, name: str) -> int | None:
    """The broker a config request goes to: a broker's own resource to it, the rest to any."""
    return int(name) if resource_type == ConfigResourceType.BROKER and name else None


# What an operator can do about a refusal of DeleteRecords, by Kafka error code.
_DELETE_RECORDS_HINTS = {
    Errors.PolicyViolationError.errno: "Kafka deletes records only from a topic whose cleanup.policy includes "
                                       "delete; a compact-only topic keeps them until compaction removes them",
    Errors.OffsetOutOfRangeError.errno: "An offset past the high watermark cannot be deleted up to; the page lists "
                                        "each partition's high watermark",
    Errors.LeaderNotAvailableError.errno: "A partition without a leader cannot delete records until a replica "
                                          "leads it again",
}


def delete_records(admin: KafkaAdminClient, topic: str, metadata: TopicInfo | None, before: Mapping[int, int], *,
                   timeout_ms: int) -> dict[int, int]:
    """DeleteRecords: each partition's records below its offset go (-1: below the high
    watermark); the new log start offsets. One request per leader (from the topic's `metadata`),
    all in flight together."""
    if metadata is None:
        raise error_for_code(Errors.UnknownTopicOrPartitionError.errno, what=f"deleting records of {topic}")
    leaders: dict[int, list[int]] = defaultdict(list)
    refused: dict[int, list[int]] = defaultdict(list)
    for p in metadata.partitions:
        if p.partition in before:
            if p.is_offline:
                refused[Errors.LeaderNotAvailableError.errno].append(p.partition)
            else:
                leaders[p.leader].append(p.partition)
    topic_cls = DeleteRecordsRequest.DeleteRecordsTopic
    requests = [(node, DeleteRecordsRequest(timeout_ms=timeout_ms, topics=[topic_cls(name=topic, partitions=[
        topic_cls.DeleteRecordsPartition(partition_index=p, offset=before[p]) for p in sorted(ids)])]))
        for node, ids in sorted(leaders.items())]
    manager = admin._manager
    log_starts = {}
    for response in manager.run(wire.send_all, manager, requests) if requests else ():
        if isinstance(response, Exception):
            raise response
        for answered in response.topics:
            for p in answered.partitions:
                if p.error_code:
                    refused[p.error_code].append(p.partition_index)
                else:
                    log_starts[p.partition_index] = p.low_watermark
    if refused:
        raise _delete_records_error(topic, {code: sorted(ids) for code, ids in refused.items()})
    return log_starts


def _delete_records_error(topic: str, refused: dict[int, list[int]]) -> GatewayError:
    """One sentence per error code, each naming its partitions (the lowest code in `kafka_code`)."""
    sentences = []
    for code, ids in sorted(refused.items()):
        shown = ", ".join(f"{topic}-{p}" for p in ids[:10]) + (f" (+{len(ids) - 10} more)" if len(ids) > 10 else "")
        sentences.append(str(error_for_code(code, what=f"deleting records of {shown}",
                                            hint=_DELETE_RECORDS_HINTS.get(code))))
    return GatewayError(" ".join(sentences), kafka_code=error_for_code(min(refused)).kafka_code)
