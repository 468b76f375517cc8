"""A Confluent-compatible schema registry: `python -m engine registry --bootstrap HOST:PORT`.

It keeps every subject, version, schema, compatibility level and mode in the compacted
topic `_schemas`, written in Confluent Schema Registry's key and value JSON formats, and
reaches the cluster only through the Kafka protocol (aiokafka), so it runs against Apache
Kafka as well as against our engine, and Confluent's registry or Karapace pointed at the
same topic read the same subjects.

Pieces, each with one job:
- `schemas/`: parse AVRO (fastavro), PROTOBUF (protoc, from grpcio-tools) and JSON Schema
  (jsonschema), resolve references, and give each schema its canonical form;
- `compatibility/`: the seven levels and each format's resolution rules;
- `records.py`: the `_schemas` key and value formats;
- `store.py`: the in-memory state the records build (owned by the reader);
- `reader.py`, `writer.py`: consume and produce `_schemas`;
- `election.py`: the primary, elected through a Kafka group of protocol type "sr";
- `registry.py`: the operations; `http_api.py`: Confluent's REST paths; `auth.py`: who may call.
"""
