"""Records decoded by schema id through the schema registry, beside the same records in JSON.

One engine broker and one registry (`python -m engine registry`). Two topics hold the same N
records: one written by confluent-kafka's AvroSerializer (Confluent's framing: magic byte, schema
id, Avro), the other as plain JSON. In the same run, for each topic:
  - browse: every record read by the console's reader and presented (decoded) as the message
    pages do (auto: the Avro topic's ids resolved through the registry, cached after the first);
  - search: a JSON-path filter on every record (amount > 900), Avro values decoded to JSON
    first (console.messages.presenting.Presenter.decoded_value), JSON values parsed as they are.
Prints decoded records per second and the Avro/JSON ratio (target: at least 0.5).

    .venv/bin/python benchmarks/registry_decode.py [--records N] [--rounds R]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
os.environ.setdefault("DEBUG", "1")
import django  # noqa: E402

django.setup()
from console.kafka_gateway.consumer import open_topic_reader  # noqa: E402
from console.kafka_gateway.records import ConnectionSettings  # noqa: E402
from console.messages.deserializers import Deserializers  # noqa: E402
from console.messages.filters import FilterSpec, RecordFilter  # noqa: E402
from console.messages.presenting import Presenter  # noqa: E402
from console.messages.scan import SearchLimits, initial_progress, search  # noqa: E402
from console.schema_registry import resolver  # noqa: E402
from console.schema_registry.client import RegistryClient  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.groups import GROUP_TEST_CONFIGS  # noqa: E402
from tests.support.registry_process import RegistryProcess  # noqa: E402

PARTITIONS = 3
AVRO_TOPIC, JSON_TOPIC = "orders-avro", "orders-json"
SCHEMA = {"type": "record", "name": "Order", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": "string"}, {"name": "country", "type": "string"},
    {"name": "amount", "type": "int"}, {"name": "paid", "type": "boolean"}]}
FILTER = FilterSpec(json_path="amount", json_op=">", json_literal="900")


def order(i: int) -> dict:
    return {"id": i, "customer": f"customer-{i % 5000:05d}", "country": ("DE", "NZ", "FR")[i % 3],
            "amount": i % 997, "paid": i % 2 == 0}


def produce(engine, registry_url: str, records: int) -> None:
    admin = AdminClient({"bootstrap.servers": engine.bootstrap})
    for future in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in (AVRO_TOPIC, JSON_TOPIC)]).values():
        future.result(timeout=30)
    serializer = AvroSerializer(SchemaRegistryClient({"url": registry_url}), json.dumps(SCHEMA))
    context = SerializationContext(AVRO_TOPIC, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": engine.bootstrap, "linger.ms": 20})
    for i in range(records):
        for topic, value in ((AVRO_TOPIC, serializer(order(i), context)),
                             (JSON_TOPIC, json.dumps(order(i)).encode())):
            while True:
                try:
                    producer.produce(topic, value=value, key=b"%d" % i)
                    break
                except BufferError:
                    producer.poll(0.05)
    assert producer.flush(60) == 0


def presenter(registry_url: str) -> Presenter:
    client = RegistryClient(registry_url)

    def lookup(schema_id: int):
        resolved = resolver.resolve_id(client, schema_id)
        return resolved, resolved.subject
    return Presenter(deserializers=Deserializers(registry=lookup), key_format="auto", value_format="auto",
                     header_format="auto")


def browse(bootstrap: str, topic: str, view: Presenter, records: int) -> float:
    """Every record read and presented, as the browse pages decode them."""
    count, started = 0, time.perf_counter()
    with open_topic_reader(ConnectionSettings(bootstrap), topic) as reader:
        progress = initial_progress(reader)
        everything = RecordFilter(FilterSpec())
        for kind, item in search(reader, progress, everything, SearchLimits(max_matches=10 ** 9, max_seconds=3600)):
            if kind == "match":
                decoded = view.present(item).value
                assert decoded.error is None, decoded.error
                count += 1
    assert count == records, count
    return count / (time.perf_counter() - started)


def search_json_path(bootstrap: str, topic: str, view: Presenter, records: int) -> tuple[float, int]:
    record_filter = RecordFilter(FILTER, transform=view.decoded_value, header_transform=lambda v: v)
    started = time.perf_counter()
    with open_topic_reader(ConnectionSettings(bootstrap), topic) as reader:
        progress = initial_progress(reader)
        for kind, stats in search(reader, progress, record_filter, SearchLimits(max_matches=10 ** 9,
                                                                                  max_seconds=3600)):
            pass
    assert kind == "done" and stats.records_scanned == records, stats
    return stats.records_scanned / (time.perf_counter() - started), stats.matches


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternate the topics; report medians")
    args = parser.parse_args()
    figures: dict[str, list[float]] = {k: [] for k in ("browse avro", "browse json", "search avro", "search json")}
    matches = {}
    with tempfile.TemporaryDirectory() as tmp:
        engine = EngineProcess(Path(tmp) / "data", brokers=1, configs=GROUP_TEST_CONFIGS).start()
        registry = RegistryProcess(engine.bootstrap, Path(tmp)).start()
        try:
            produce(engine, registry.url, args.records)
            view = presenter(registry.url)
            for _ in range(args.rounds):
                figures["browse avro"].append(browse(engine.bootstrap, AVRO_TOPIC, view, args.records))
                figures["browse json"].append(browse(engine.bootstrap, JSON_TOPIC, view, args.records))
                rate, matches["avro"] = search_json_path(engine.bootstrap, AVRO_TOPIC, view, args.records)
                figures["search avro"].append(rate)
                rate, matches["json"] = search_json_path(engine.bootstrap, JSON_TOPIC, view, args.records)
                figures["search json"].append(rate)
        finally:
            registry.kill()
            engine.kill()
    assert matches["avro"] == matches["json"], matches
    rates = {name: statistics.median(runs) for name, runs in figures.items()}
    print(f"{args.records:,} records of 5 fields per topic, {PARTITIONS} partitions, 1 engine broker; "
          f"medians of {args.rounds} rounds")
    for what in ("browse", "search"):
        avro, plain = rates[f"{what} avro"], rates[f"{what} json"]
        print(f"{what + ' (Avro by schema id)':>34}: {avro:>10,.0f} records/s   {avro / plain:5.2f}x JSON")
        print(f"{what + ' (plain JSON)':>34}: {plain:>10,.0f} records/s")
    print(f"search matches: {matches['avro']:,} in each topic")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
