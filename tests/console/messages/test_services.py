"""Message services: validation with readable errors, audit entries however they end."""
import json

import pytest

from console.accounts.models import AuditLogEntry
from console.errors import InvalidInput
from console.messages import services
from console.messages.models import TopicMessageSettings
from tests.console.messages.test_deserializers import AVRO, descriptor_set


def test_schema_ids_are_unique_and_schemas_must_parse(db, users):
    operator = users["operator"]
    services.schema_register(actor=operator, schema_id=5, subject="orders-value", schema=AVRO)
    with pytest.raises(InvalidInput, match="already registered"):
        services.schema_register(actor=operator, schema_id=5, subject="other", schema=AVRO)
    with pytest.raises(InvalidInput, match="Not a valid Avro schema"):
        services.schema_register(actor=operator, schema_id=6, subject="bad", schema='{"type": "recordd"}')
    results = list(AuditLogEntry.objects.filter(action="schema.register").values_list("result", flat=True))
    assert sorted(results) == ["failed", "failed", "ok"]


def test_settings_refuse_bad_schemas_formats_and_unknown_protobuf_types(cluster, users):
    operator = users["operator"]
    common = {"cluster": cluster, "actor": operator, "topic": "t", "key_format": "auto", "value_format": "avro",
              "header_format": "auto"}
    with pytest.raises(InvalidInput, match="Not a valid Avro schema"):
        services.message_settings_update(**common, avro_schema="{nope")
    with pytest.raises(InvalidInput, match="Unknown format"):
        services.message_settings_update(**{**common, "value_format": "xml"})
    with pytest.raises(InvalidInput, match="no message type 'shop.Nope'"):
        services.message_settings_update(**common, protobuf_descriptor_set=descriptor_set(),
                                         protobuf_message_type="shop.Nope")
    assert not TopicMessageSettings.objects.exists()
    row = services.message_settings_update(**common, avro_schema=AVRO, protobuf_descriptor_set=descriptor_set(),
                                           protobuf_message_type="shop.Order")
    assert json.loads(row.avro_schema)["name"] == "Order" and row.protobuf_message_type == "shop.Order"


def test_produce_refuses_bad_input_before_sending(cluster, users):
    operator = users["operator"]
    with pytest.raises(InvalidInput, match="Copies must be between"):
        services.message_produce(cluster=cluster, actor=operator, topic="t", key=None, value="x", copies=0)
    with pytest.raises(InvalidInput, match="No schema with id 99"):
        services.message_produce(cluster=cluster, actor=operator, topic="t", key=None, value="{}",
                                 value_serializer="avro", schema_id=99)
    with pytest.raises(InvalidInput, match="has no Avro schema"):
        services.message_produce(cluster=cluster, actor=operator, topic="t", key=None, value="{}",
                                 value_serializer="avro")
    entries = AuditLogEntry.objects.filter(action="message.produce")
    assert entries.count() == 3 and all(e.result == "failed" for e in entries)
