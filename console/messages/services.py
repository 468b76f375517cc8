"""Writes for messages: produce, the topic's deserializers and schemas, registered schemas and
masking rules. Each checks its input (InvalidInput), writes an audit log entry however it
ends, and never puts a record's bytes in the audit trail (sizes and formats only)."""
from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from console.accounts.services import audited
from console.clusters.models import Cluster
from console.errors import InvalidInput
from console.kafka_gateway.producer import ProducedRecord, produce
from console.messages.deserializers import DecodeError, parse_avro_schema, protobuf_message_types
from console.messages.masking import check_rule
from console.messages.models import FORMATS, MaskingRule, RegisteredSchema, TopicMessageSettings
from console.messages.selectors import message_settings_get
from console.messages.serializers import serialize
from console.schema_registry.selectors import serialize_with_subject

MAX_COPIES = 1000


def message_produce(*, cluster: Cluster, actor, topic: str, key: str | None, value: str | None,
                    headers: Sequence[tuple[str, str]] = (), partition: int | None = None,
                    key_serializer: str = "string", value_serializer: str = "string",
                    schema_id: int | None = None, copies: int = 1, subject: str = "",
                    schema_version: int | None = None, message_type: str = "") -> list[ProducedRecord]:
    """Serialize and send `copies` copies of one record. `schema_id`: write an Avro value in
    Confluent's framing with that registered schema instead of the topic's own schema.
    value_serializer "registry": write the value with the cluster's schema registry, `subject`
    (default <topic>-value) at `schema_version` (default latest), in Confluent's framing."""
    details = {"partition": partition, "copies": copies, "key_serializer": key_serializer,
               "value_serializer": value_serializer, "schema_id": schema_id,
               "subject": subject or None, "schema_version": schema_version,
               "key_chars": None if key is None else len(key), "value_chars": None if value is None else len(value),
               "headers": [name for name, _ in headers]}
    with audited(actor=actor, cluster=cluster, action="message.produce", target=topic, details=details) as details:
        if not 1 <= copies <= MAX_COPIES:
            raise InvalidInput(f"Copies must be between 1 and {MAX_COPIES}.")
        if partition is not None and partition < 0:
            raise InvalidInput("The partition must be 0 or more (or left empty to let the client choose).")
        row = message_settings_get(cluster=cluster, topic=topic)
        registered = None
        if schema_id is not None:
            found = RegisteredSchema.objects.filter(schema_id=schema_id).first()
            if found is None:
                raise InvalidInput(f"No schema with id {schema_id} is registered in the console.")
            registered = (found.schema_id, found.schema)
        common = {"avro_schema": row.avro_schema, "protobuf_descriptor_set": bytes(row.protobuf_descriptor_set or b""),
                  "protobuf_message_type": row.protobuf_message_type}
        key_bytes = serialize(key, key_serializer, what="key", **{**common, "avro_schema": row.avro_key_schema})
        if value_serializer == "registry" and value is not None:
            value_bytes = serialize_with_subject(cluster=cluster, subject=subject or f"{topic}-value",
                                                 version=schema_version, text=value, message_type=message_type)
        else:
            value_bytes = serialize(value, "string" if value_serializer == "registry" else value_serializer,
                                    what="value", registered_schema=registered, **common)
        for name, _ in headers:
            if not name:
                raise InvalidInput("Every header needs a name.")
        produced = produce(cluster.connection_settings(), topic=topic, key=key_bytes, value=value_bytes,
                           headers=[(n, v.encode("utf-8")) for n, v in headers], partition=partition,
                           copies=copies, request_timeout_ms=settings.KAFKA_REQUEST_TIMEOUT_MS)
        details["offsets"] = [[r.partition, r.offset] for r in produced[:20]]
    return produced


def message_settings_update(*, cluster: Cluster, actor, topic: str, key_format: str, value_format: str,
                            header_format: str, avro_schema: str | None = None, avro_key_schema: str | None = None,
                            protobuf_descriptor_set: bytes | None = None,
                            protobuf_message_type: str | None = None) -> TopicMessageSettings:
    """Remember the topic's deserializers; optionally replace its Avro schema or Protobuf types."""
    with audited(actor=actor, cluster=cluster, action="message.settings_update", target=topic,
                 details={"key_format": key_format, "value_format": value_format, "header_format": header_format}):
        for fmt in (key_format, value_format, header_format):
            if fmt not in FORMATS:
                raise InvalidInput(f"Unknown format {fmt!r}: use one of {', '.join(FORMATS)}.")
        row = message_settings_get(cluster=cluster, topic=topic)
        row.key_format, row.value_format, row.header_format = key_format, value_format, header_format
        try:
            for field, schema in (("avro_schema", avro_schema), ("avro_key_schema", avro_key_schema)):
                if schema is not None:
                    if schema.strip():
                        parse_avro_schema(schema)
                    setattr(row, field, schema.strip())
            if protobuf_descriptor_set is not None:
                protobuf_message_types(protobuf_descriptor_set)
                row.protobuf_descriptor_set = protobuf_descriptor_set
            if protobuf_message_type is not None:
                types = protobuf_message_types(bytes(row.protobuf_descriptor_set or b""))
                if protobuf_message_type and protobuf_message_type not in types:
                    raise InvalidInput(f"The descriptor set has no message type {protobuf_message_type!r} "
                                       f"(it has {', '.join(types) or 'none'}).")
                row.protobuf_message_type = protobuf_message_type
        except DecodeError as exc:
            raise InvalidInput(str(exc)) from exc
        row.save()
    return row


LOCAL_SCHEMAS = "Local schemas"        # the console's own store (the Local schemas page), of no cluster


def schema_register(*, actor, schema_id: int, subject: str, schema: str) -> RegisteredSchema:
    # The store belongs to no cluster: its entry names it instead, for the audit log's Cluster column.
    with audited(actor=actor, cluster=None, action="schema.register", target=f"{subject} ({schema_id})",
                 details={"registry": LOCAL_SCHEMAS}):
        if schema_id < 1:
            raise InvalidInput("A schema id is a positive number.")
        try:
            parse_avro_schema(schema)
        except DecodeError as exc:
            raise InvalidInput(str(exc)) from exc
        if RegisteredSchema.objects.filter(schema_id=schema_id).exists():
            raise InvalidInput(f"Schema id {schema_id} is already registered.")
        return RegisteredSchema.objects.create(schema_id=schema_id, subject=subject, schema=schema)


def masking_rule_add(*, cluster: Cluster, actor, topic: str, kind: str, pattern: str,
                     replacement: str = "***") -> MaskingRule:
    with audited(actor=actor, cluster=cluster, action="masking_rule.add", target=topic,
                 details={"kind": kind, "pattern": pattern}):
        check_rule(kind=kind, pattern=pattern)
        return MaskingRule.objects.create(cluster=cluster, topic=topic, kind=kind, pattern=pattern,
                                          replacement=replacement or "***")


def masking_rule_delete(*, cluster: Cluster, actor, topic: str, rule_id: int) -> None:
    with audited(actor=actor, cluster=cluster, action="masking_rule.delete", target=topic,
                 details={"rule_id": rule_id}):
        deleted, _ = MaskingRule.objects.filter(cluster=cluster, topic=topic, pk=rule_id).delete()
        if not deleted:
            raise InvalidInput(f"Topic {topic} has no masking rule {rule_id}.")
