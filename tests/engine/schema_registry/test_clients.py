"""confluent-kafka's own schema registry client and serdes against our registry, records
round-tripped through the engine with confluent-kafka's producer and consumer."""
from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pool, message_factory

from engine.schema_registry.schemas import protobuf as proto_schemas

ORDER_V1 = {"type": "record", "name": "Order", "namespace": "shop",
            "fields": [{"name": "id", "type": "string"}, {"name": "cents", "type": "long"}]}
ORDER_V2 = {**ORDER_V1, "fields": ORDER_V1["fields"] + [{"name": "note", "type": ["null", "string"],
                                                           "default": None}]}
ORDER_PROTO = """syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Order {
  string id = 1;
  int64 cents = 2;
  google.protobuf.Timestamp placed_at = 3;
  message Line { string sku = 1; int32 quantity = 2; }
  repeated Line lines = 4;
}
"""


def avro(schema: dict) -> Schema:
    import json
    return Schema(json.dumps(schema), "AVRO")


@pytest.fixture
def client(registry):
    return SchemaRegistryClient({"url": registry.url})


def round_trip(engine, topic: str, values: list[bytes]) -> list[bytes]:
    producer = Producer({"bootstrap.servers": engine.bootstrap})
    for value in values:
        producer.produce(topic, value=value)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": f"g-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    received: list[bytes] = []
    try:
        for _ in range(300):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                received.append(message.value())
            if len(received) == len(values):
                break
    finally:
        consumer.close()
    return received


def test_register_evolve_and_fetch_by_id(client, subject):
    first = client.register_schema(subject, avro(ORDER_V1))
    assert client.register_schema(subject, avro(ORDER_V1)) == first     # the same schema keeps its id
    second = client.register_schema(subject, avro(ORDER_V2))
    assert second != first
    assert client.get_versions(subject) == [1, 2]
    latest = client.get_latest_version(subject)
    assert (latest.version, latest.schema_id) == (2, second)
    fetched = client.get_schema(first)
    assert fetched.schema_type == "AVRO" and '"cents"' in fetched.schema_str
    looked_up = client.lookup_schema(subject, avro(ORDER_V1))
    assert (looked_up.version, looked_up.schema_id) == (1, first)
    assert client.get_compatibility(subject_name=None) == "BACKWARD"
    assert client.test_compatibility(subject, avro({**ORDER_V1, "fields": [{"name": "x", "type": "int"}]})) is False
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(subject, avro({**ORDER_V1, "fields": [{"name": "x", "type": "int"}]}))
    assert refused.value.http_status_code == 409 and refused.value.error_code == 409


def test_one_schema_keeps_one_id_across_subjects(client, subject):
    first = client.register_schema(subject + "-a", avro({**ORDER_V1, "name": "Dedup"}))
    # The same schema, laid out differently: attribute order and whitespace do not make it another schema.
    respelled = Schema('{ "namespace": "shop", "name": "Dedup", "type": "record", "fields": [ '
                       '{"type": "string", "name": "id"}, {"name": "cents", "type": "long"} ] }', "AVRO")
    assert client.register_schema(subject + "-b", respelled) == first
    assert sorted((v.subject, v.version) for v in client.get_schema_versions(first)) == [
        (subject + "-a", 1), (subject + "-b", 1)]


def test_avro_serializer_round_trip_through_the_engine(client, registry_engine, topic_name):
    serializer = AvroSerializer(client, __import__("json").dumps(ORDER_V2))
    context = SerializationContext(topic_name, MessageField.VALUE)
    records = [{"id": f"o{i}", "cents": i * 100, "note": None if i % 2 else "gift"} for i in range(5)]
    framed = [serializer(record, context) for record in records]
    assert all(value[0] == 0 for value in framed)      # Confluent's magic byte, then the schema id
    received = round_trip(registry_engine, topic_name, framed)
    deserializer = AvroDeserializer(client)
    assert [deserializer(value, context) for value in received] == records
    assert client.get_latest_version(f"{topic_name}-value").schema_id == int.from_bytes(framed[0][1:5], "big")


def message_classes(text: str, file_name: str):
    """Message classes for a .proto text, built at run time (no protoc-generated module)."""
    model = proto_schemas.compile_text(text, {})
    model.file.name = file_name
    pool = descriptor_pool.DescriptorPool()
    for imported in model.imports:
        pool.Add(imported)
    pool.Add(model.file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
            for name in ("shop.Order", "shop.Order.Line")}


def test_protobuf_serializer_round_trip_through_the_engine(client, registry_engine, topic_name):
    classes = message_classes(ORDER_PROTO, "shop/order.proto")
    Order, Line = classes["shop.Order"], classes["shop.Order.Line"]
    serializer = ProtobufSerializer(Order, client, {"use.deprecated.format": False})
    context = SerializationContext(topic_name, MessageField.VALUE)
    orders = [Order(id=f"o{i}", cents=i, lines=[Line(sku="a", quantity=i)]) for i in range(3)]
    for order in orders:
        order.placed_at.FromSeconds(1_700_000_000 + 1)
    framed = [serializer(order, context) for order in orders]
    received = round_trip(registry_engine, topic_name, framed)
    deserializer = ProtobufDeserializer(Order, {"use.deprecated.format": False})
    decoded = [deserializer(value, context) for value in received]
    assert [(o.id, o.cents, o.lines[0].quantity) for o in decoded] == [(f"o{i}", i, i) for i in range(3)]
    # The serializer registered a base64 FileDescriptorProto; the registry keeps .proto text.
    stored = client.get_latest_version(f"{topic_name}-value").schema.schema_str
    assert "message Order {" in stored and 'import "google/protobuf/timestamp.proto";' in stored
    # And hands the descriptor back when asked for it (as the deserializer does).
    serialized = client.get_schema(int.from_bytes(framed[0][1:5], "big"), fmt="serialized").schema_str
    assert proto_schemas.parse(serialized, (), {}).canonical == proto_schemas.parse(stored, (), {}).canonical


def test_protobuf_deserializer_reads_a_nested_message_by_its_message_indexes(client, registry_engine, topic_name):
    classes = message_classes(ORDER_PROTO, "shop/order.proto")
    Line = classes["shop.Order.Line"]
    context = SerializationContext(topic_name, MessageField.VALUE)
    framed = ProtobufSerializer(Line, client, {"use.deprecated.format": False})(Line(sku="z", quantity=7), context)
    assert framed[5:8] == b"\x04\x00\x00"      # two indexes, zigzag: message 0, nested message 0
    [received] = round_trip(registry_engine, topic_name, [framed])
    line = ProtobufDeserializer(Line, {"use.deprecated.format": False})(received, context)
    assert (line.sku, line.quantity) == ("z", 7)


def test_json_serializer_round_trip_through_the_engine(client, registry_engine, topic_name):
    schema = ('{"$schema":"http://json-schema.org/draft-07/schema#","title":"Payment","type":"object",'
              '"properties":{"id":{"type":"string"},"amount":{"type":"number"}},"required":["id"]}')
    serializer = JSONSerializer(schema, client)
    context = SerializationContext(topic_name, MessageField.VALUE)
    payments = [{"id": f"p{i}", "amount": i * 1.5} for i in range(3)]
    received = round_trip(registry_engine, topic_name, [serializer(p, context) for p in payments])
    deserializer = JSONDeserializer(None, schema_registry_client=client)
    assert [deserializer(value, context) for value in received] == payments
    with pytest.raises(Exception):
        serializer({"amount": 1}, context)     # "id" is required: the serializer validates against the schema


def test_references_resolve_across_subjects(client, subject):
    address = {"type": "record", "name": "Address", "namespace": "shop",
               "fields": [{"name": "city", "type": "string"}]}
    client.register_schema(subject + "-address", avro(address))
    customer = Schema('{"type":"record","name":"Customer","namespace":"shop","fields":'
                      '[{"name":"home","type":"shop.Address"}]}', "AVRO",
                      [SchemaReference("shop.Address", subject + "-address", 1)])
    customer_id = client.register_schema(subject + "-customer", customer)
    assert client.get_schema(customer_id).references[0].subject == subject + "-address"
    assert client.get_referenced_by(subject + "-address", 1) == [customer_id]
    with pytest.raises(SchemaRegistryError) as missing:
        client.register_schema(subject + "-other", Schema(customer.schema_str, "AVRO",
                                                          [SchemaReference("shop.Address", subject + "-nope", 1)]))
    assert missing.value.error_code == 42201
