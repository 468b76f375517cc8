"""`python -m engine console-consumer`: kafka-console-consumer.sh's options and output.

Subscribes to `--topic` (or `--include REGEX`) in `--group` (default
`console-consumer-NNNNN`), or reads one `--partition` from `--offset` (a number, `earliest` or
`latest`) without a group; `--from-beginning` starts a new group at the log start.
`--max-messages N` stops after N records, `--timeout-ms T` after T ms without one; then it
prints `Processed a total of N messages` on stderr, as Kafka. `--isolation-level
read_committed` skips aborted transactions. The default formatter's properties: `print.key`,
`print.value`, `print.timestamp` (`CreateTime:1700000000000`), `print.partition`
(`Partition:0`), `print.offset` (`Offset:42`), `print.headers` (`k:v,k2:v2` or `NO_HEADERS`),
`key.separator` (tab), `line.separator` (\\n), `headers.separator` (,), `null.literal` (null).
"""
from __future__ import annotations

import argparse
import random
import signal
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaException, TopicPartition

from engine.tools.cli import (CommandError, add_tool, load_properties, property_pairs, rdkafka_config, settings,
                              usage_error)

CONSUMER_NAMES = ("client.id", "fetch.min.bytes", "fetch.max.bytes", "max.partition.fetch.bytes",
                  "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "group.instance.id",
                  "partition.assignment.strategy", "enable.auto.commit", "auto.commit.interval.ms")
TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


def add_parser(commands) -> None:
    p = add_tool(commands, "console-consumer", "print records to standard output (kafka-console-consumer.sh)",
                 "This tool helps to read data from Kafka topics and outputs it to standard output.")
    p.add_argument("--bootstrap-server", help="REQUIRED: The server(s) to connect to.")
    p.add_argument("--topic", help="The topic to consume on.")
    p.add_argument("--include", help="Regular expression specifying list of topics to include for consumption.")
    p.add_argument("--partition", type=int, help="The partition to consume from.")
    p.add_argument("--offset", default=None, help="The offset to consume from (a non-negative number), or "
                                                  "'earliest' which means from beginning, or 'latest' which means "
                                                  "from end")
    p.add_argument("--consumer-property", action="append", default=[])
    p.add_argument("--consumer.config", dest="consumer_config")
    p.add_argument("--formatter", default="kafka.tools.DefaultMessageFormatter")
    p.add_argument("--property", action="append", default=[])
    p.add_argument("--formatter-config")
    p.add_argument("--from-beginning", action="store_true")
    p.add_argument("--max-messages", type=int)
    p.add_argument("--timeout-ms", type=int)
    p.add_argument("--skip-message-on-error", action="store_true")
    p.add_argument("--isolation-level", default="read_uncommitted", choices=("read_committed", "read_uncommitted"))
    p.add_argument("--group", help="The consumer group id of the consumer.")
    p.set_defaults(parser=p)


class Formatter:
    """Kafka's DefaultMessageFormatter."""

    def __init__(self, props: dict[str, str]) -> None:
        flag = lambda name, default=False: props.get(name, str(default)).strip().lower() == "true"   # noqa: E731
        self.timestamp, self.key, self.value = flag("print.timestamp"), flag("print.key"), flag("print.value", True)
        self.partition, self.offset, self.headers = flag("print.partition"), flag("print.offset"), \
            flag("print.headers")
        self.key_separator = _unescape(props.get("key.separator", "\t")).encode()
        self.line_separator = _unescape(props.get("line.separator", "\n")).encode()
        self.headers_separator = _unescape(props.get("headers.separator", ",")).encode()
        self.null = props.get("null.literal", "null").encode()

    def format(self, m) -> bytes:
        fields: list[bytes] = []
        if self.timestamp:
            kind, stamp = m.timestamp()
            fields.append(f"{TIMESTAMP_TYPES[kind]}:{stamp}".encode() if kind in TIMESTAMP_TYPES else b"NO_TIMESTAMP")
        if self.partition:
            fields.append(f"Partition:{m.partition()}".encode())
        if self.offset:
            fields.append(f"Offset:{m.offset()}".encode())
        if self.headers:
            headers = m.headers() or []
            fields.append(self.headers_separator.join(k.encode() + b":" + (v if v is not None else self.null)
                                                      for k, v in headers) if headers else b"NO_HEADERS")
        if self.key:
            fields.append(m.key() if m.key() is not None else self.null)
        if self.value:
            fields.append(m.value() if m.value() is not None else self.null)
            return self.key_separator.join(fields) + self.line_separator
        return self.key_separator.join(fields) + (self.key_separator if fields else b"")


def _unescape(text: str) -> str:
    return text.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r")


def _check(args) -> None:
    p = args.parser
    if not args.bootstrap_server:
        usage_error(p, "Missing required argument \"[bootstrap-server]\"")
    if bool(args.topic) == bool(args.include):
        usage_error(p, "Exactly one of --include/--topic is required. ")
    if args.partition is not None and not args.topic:
        usage_error(p, "The topic is required when partition is specified.")
    if args.from_beginning and args.offset is not None:
        usage_error(p, "Options from-beginning and offset cannot be specified together.")
    if args.offset is not None and args.partition is None:
        usage_error(p, "The partition is required when offset is specified.")
    if args.group and args.partition is not None:
        usage_error(p, "Options group and partition cannot be specified together.")
    if args.offset is not None and args.offset not in ("earliest", "latest"):
        try:
            if int(args.offset) < 0:
                raise ValueError
        except ValueError:
            usage_error(p, f"The provided offset value '{args.offset}' is incorrect. Valid values are 'earliest', "
                           "'latest', or a non-negative long.")


def run(args: argparse.Namespace) -> int:
    _check(args)
    try:
        merged = settings(args.bootstrap_server, args.consumer_config, args.consumer_property)
        formatter = Formatter({**load_properties(args.formatter_config), **property_pairs(args.property)})
    except CommandError as exc:
        print(exc, file=sys.stderr)
        return 1
    group = args.group or merged.get("group.id") or f"console-consumer-{random.randrange(100000)}"
    config = rdkafka_config(merged, CONSUMER_NAMES)
    config.update({"group.id": group, "isolation.level": args.isolation_level, "enable.partition.eof": False,
                   "auto.offset.reset": "earliest" if args.from_beginning else merged.get("auto.offset.reset",
                                                                                          "latest")})
    if args.partition is not None:
        config["enable.auto.commit"] = False
    config.setdefault("client.id", "console-consumer")
    try:
        consumer = Consumer(config)
    except KafkaException as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    count, code = 0, 0
    try:
        if args.partition is not None:
            start = {"earliest": OFFSET_BEGINNING, "latest": OFFSET_END, None: OFFSET_END}.get(args.offset)
            consumer.assign([TopicPartition(args.topic, args.partition,
                                            start if start is not None else int(args.offset))])
        else:
            consumer.subscribe([args.topic] if args.topic else ["^" + args.include.lstrip("^")])
        out = sys.stdout.buffer
        last = time.monotonic()
        while not stop[0] and (args.max_messages is None or count < args.max_messages):
            messages = consumer.consume(min(500, (args.max_messages or 500) - count), 0.2)
            if not messages:
                if args.timeout_ms is not None and (time.monotonic() - last) * 1000 >= args.timeout_ms:
                    break
                continue
            last = time.monotonic()
            for m in messages:
                if m.error() is not None:
                    if not args.skip_message_on_error and m.error().fatal():
                        raise KafkaException(m.error())
                    print(f"Error processing message: {m.error().str()}", file=sys.stderr)
                    continue
                out.write(formatter.format(m))
                count += 1
            out.flush()
    except KeyboardInterrupt:
        pass
    except KafkaException as exc:
        print(f"Error processing message, terminating consumer process: {exc}", file=sys.stderr)
        code = 1
    finally:
        try:
            consumer.close()
        finally:
            print(f"Processed a total of {count} messages", file=sys.stderr)
    return code
