"""`python -m engine console-producer`: kafka-console-producer.sh's options and line reader.

Reads standard input line by line and sends each line as a record to `--topic`. The reader
properties (`--property`, `--reader-config`) are Kafka's LineMessageReader's: `parse.key`,
`key.separator` (tab), `parse.headers`, `headers.delimiter` (tab), `headers.separator` (,),
`headers.key.separator` (:), `null.marker`, `ignore.error`. Producer settings: `--request-required-acks`
(-1), `--compression-codec` (none; gzip when given without a value), `--sync`, `--batch-size`,
`--timeout` (linger, 1000 ms), `--producer-property k=v`, `--producer.config FILE`. A line that
cannot be parsed stops the tool with Kafka's message; a record Kafka refuses is reported on
stderr as Kafka's ErrorLoggingCallback does, and the tool exits 1 at the end.
"""
from __future__ import annotations

import argparse
import sys

from confluent_kafka import KafkaException, Producer

from engine.tools.cli import (CommandError, add_tool, load_properties, property_pairs, rdkafka_config, settings,
                              usage_error)

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PRODUCER_NAMES = ("acks", "linger.ms", "batch.size", "compression.type", "enable.idempotence", "client.id",
                  "request.timeout.ms", "retries", "retry.backoff.ms", "max.in.flight.requests.per.connection",
                  "message.max.bytes", "transactional.id", "delivery.timeout.ms", "partitioner")


def add_parser(commands) -> None:
    p = add_tool(commands, "console-producer", "send lines from standard input as records "
                                               "(kafka-console-producer.sh)",
                 "This tool helps to read data from standard input and publish it to Kafka.")
    p.add_argument("--bootstrap-server", help="REQUIRED: The server(s) to connect to.")
    p.add_argument("--topic", help="REQUIRED: The topic name to produce messages to.")
    p.add_argument("--sync", action="store_true", help="If set message send requests to the brokers are "
                                                       "synchronously, one at a time as they arrive.")
    p.add_argument("--compression-codec", nargs="?", const="gzip", choices=CODECS,
                   help="The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'.")
    p.add_argument("--batch-size", type=int, default=16384)
    p.add_argument("--message-send-max-retries", type=int, default=3)
    p.add_argument("--retry-backoff-ms", type=int, default=100)
    p.add_argument("--timeout", type=int, default=1000, help="linger: the most a message waits to be batched (ms)")
    p.add_argument("--request-required-acks", default="-1", help="The required `acks` of the producer requests")
    p.add_argument("--request-timeout-ms", type=int, default=1500)
    p.add_argument("--property", action="append", default=[], help="A mechanism to pass user-defined properties "
                                                                    "in the form key=value to the message reader.")
    p.add_argument("--reader-config", help="Config properties file for the message reader.")
    p.add_argument("--producer-property", action="append", default=[])
    p.add_argument("--producer.config", dest="producer_config")
    p.set_defaults(parser=p)


class LineReader:
    """Kafka's LineMessageReader: a line into (key, value, headers)."""

    def __init__(self, props: dict[str, str]) -> None:
        flag = lambda name: props.get(name, "false").strip().lower() == "true"     # noqa: E731
        self.parse_key, self.parse_headers, self.ignore_error = flag("parse.key"), flag("parse.headers"), \
            flag("ignore.error")
        self.key_separator = props.get("key.separator", "\t")
        self.headers_delimiter = props.get("headers.delimiter", "\t")
        self.headers_separator = props.get("headers.separator", ",")
        self.headers_key_separator = props.get("headers.key.separator", ":")
        self.null_marker = props.get("null.marker")
        pairs = [("headers.delimiter", self.headers_delimiter, "headers.separator", self.headers_separator),
                 ("headers.delimiter", self.headers_delimiter, "headers.key.separator", self.headers_key_separator),
                 ("headers.separator", self.headers_separator, "headers.key.separator", self.headers_key_separator)]
        if self.parse_headers:
            for a, va, b, vb in pairs:
                if va == vb:
                    raise CommandError(f"{a} and {b} may not be equal")
        if self.null_marker is not None:
            for name, value in (("key.separator", self.key_separator), ("headers.separator", self.headers_separator),
                                ("headers.delimiter", self.headers_delimiter),
                                ("headers.key.separator", self.headers_key_separator)):
                if self.null_marker == value:
                    raise CommandError(f"null.marker and {name} may not be equal")
        self.line_number = 0

    def _split(self, enabled: bool, line: str, start: int, marker: str, name: str) -> str | None:
        if not enabled:
            return None
        index = line.find(marker, start)
        if index == -1:
            if self.ignore_error:
                return None
            raise CommandError(f"No {name} found on line number {self.line_number}: '{line}'")
        return line[start:index]

    def read(self, line: str):
        self.line_number += 1
        headers = self._split(self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter")
        offset = 0 if headers is None else len(headers) + len(self.headers_delimiter)
        key = self._split(self.parse_key, line, offset, self.key_separator, "key separator")
        offset += 0 if key is None else len(key) + len(self.key_separator)
        value = line[offset:]
        encoded_headers = []
        if headers is not None and headers != self.null_marker:
            for pair in headers.split(self.headers_separator):
                index = pair.find(self.headers_key_separator)
                if index == -1:
                    if self.ignore_error:
                        encoded_headers.append((pair, None))
                        continue
                    raise CommandError(f"No header key separator found in pair '{pair}' on line number "
                                       f"{self.line_number}")
                header_key, header_value = pair[:index], pair[index + len(self.headers_key_separator):]
                if header_key == self.null_marker:
                    raise CommandError(f"Header keys should not be equal to the null marker '{self.null_marker}' as "
                                       "they can't be null")
                encoded_headers.append((header_key, None if header_value == self.null_marker
                                        else header_value.encode()))
        return (None if key is None or key == self.null_marker else key.encode(),
                None if value == self.null_marker else value.encode(), encoded_headers)


def run(args: argparse.Namespace) -> int:
    if not args.bootstrap_server:
        usage_error(args.parser, "Missing required argument \"[bootstrap-server]\"")
    if not args.topic:
        usage_error(args.parser, "Missing required argument \"[topic]\"")
    try:
        reader = LineReader({**load_properties(args.reader_config), **property_pairs(args.property)})
        merged = settings(args.bootstrap_server, args.producer_config, args.producer_property)
    except CommandError as exc:
        print(exc, file=sys.stderr)
        return 1
    config = rdkafka_config(merged, PRODUCER_NAMES)
    config.setdefault("acks", args.request_required_acks)
    config.setdefault("compression.type", args.compression_codec or "none")
    config.setdefault("linger.ms", 0 if args.sync else args.timeout)
    config.setdefault("batch.size", args.batch_size)
    config.setdefault("retries", args.message_send_max_retries)
    config.setdefault("retry.backoff.ms", args.retry_backoff_ms)
    config.setdefault("client.id", "console-producer")
    try:
        producer = Producer(config)
    except KafkaException as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    failures = [0]

    def report(err, msg) -> None:
        if err is not None:
            failures[0] += 1
            key, value = msg.key(), msg.value()
            print(f"Error when sending message to topic {msg.topic()} with key: "
                  f"{'null' if key is None else f'{len(key)} bytes'}, value: "
                  f"{'null' if value is None else f'{len(value)} bytes'} with error: {err.str()}", file=sys.stderr)
    try:
        for raw in sys.stdin:
            key, value, headers = reader.read(raw.rstrip("\n").rstrip("\r") if raw.endswith("\n") else raw)
            _produce(producer, args.topic, key, value, headers, report)
            if args.sync:
                producer.flush()
    except CommandError as exc:
        producer.flush(30)
        print(f"org.apache.kafka.common.KafkaException: {exc}", file=sys.stderr)
        return 1
    remaining = producer.flush(60)
    return 1 if failures[0] or remaining else 0


def _produce(producer, topic, key, value, headers, report) -> None:
    while True:
        try:
            producer.produce(topic, value=value, key=key, headers=headers or None, on_delivery=report)
            producer.poll(0)
            return
        except BufferError:
            producer.poll(0.1)
