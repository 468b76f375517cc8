"""`python -m engine producer-perf-test` and `python -m engine consumer-perf-test`, with the
options and output lines of kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh,
driving librdkafka (confluent-kafka) clients.

Producer: `--topic --num-records N (--record-size B | --payload-file F [--payload-delimiter D]
| --payload-monotonic) --throughput R (-1: unthrottled) [--producer-props k=v ...]
[--producer.config F] [--transactional-id ID --transaction-duration-ms MS] [--print-metrics]`.
Every 5 s a window line, at the end the total line with the 50th/95th/99th/99.9th latency
percentiles (Kafka's Stats, latencies sampled as Kafka samples them).

Consumer: `--bootstrap-server --topic --messages N [--group G] [--from-latest] [--fetch-size B]
[--timeout MS] [--hide-header] [--show-detailed-stats --reporting-interval MS]
[--date-format FMT] [--consumer.config F]`: Kafka's header and result line (start.time,
end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms,
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import datetime

from confluent_kafka import Consumer, KafkaException, Producer

from engine.tools.cli import CommandError, add_tool, load_properties, property_pairs, rdkafka_config, usage_error
from engine.tools.console_producer import PRODUCER_NAMES

REPORT_INTERVAL_MS = 5000


def add_parsers(commands) -> None:
    p = add_tool(commands, "producer-perf-test", "producer throughput and latency (kafka-producer-perf-test.sh)",
                 "This tool is used to verify the producer performance.")
    p.add_argument("--topic", required=False, help="produce messages to this topic")
    p.add_argument("--num-records", type=int, help="number of messages to produce")
    p.add_argument("--record-size", type=int, help="message size in bytes.")
    p.add_argument("--payload-file", help="file to read the message payloads from.")
    p.add_argument("--payload-monotonic", action="store_true", help="payload is a monotonically increasing integer")
    p.add_argument("--payload-delimiter", default="\\n")
    p.add_argument("--throughput", type=float, help="throttle maximum message throughput to *approximately* "
                                                    "THROUGHPUT messages/sec. Set this to -1 to disable throttling.")
    p.add_argument("--producer-props", nargs="+", default=[], metavar="PROP-NAME=PROP-VALUE")
    p.add_argument("--producer.config", dest="producer_config")
    p.add_argument("--bootstrap-server", help="the brokers (also possible as --producer-props bootstrap.servers=...)")
    p.add_argument("--print-metrics", action="store_true")
    p.add_argument("--transactional-id")
    p.add_argument("--transaction-duration-ms", type=int, default=3000)
    p.set_defaults(parser=p, perf="producer")
    c = add_tool(commands, "consumer-perf-test", "consumer throughput (kafka-consumer-perf-test.sh)",
                 "This tool is used to verify the consumer performance.")
    c.add_argument("--bootstrap-server")
    c.add_argument("--topic")
    c.add_argument("--group", default=None)
    c.add_argument("--fetch-size", type=int, default=1024 * 1024)
    c.add_argument("--from-latest", action="store_true")
    c.add_argument("--socket-buffer-size", type=int, default=2 * 1024 * 1024)
    c.add_argument("--consumer.config", dest="consumer_config")
    c.add_argument("--print-metrics", action="store_true")
    c.add_argument("--show-detailed-stats", action="store_true")
    c.add_argument("--timeout", type=int, default=10000)
    c.add_argument("--messages", type=int)
    c.add_argument("--reporting-interval", type=int, default=5000)
    c.add_argument("--date-format", default="yyyy-MM-dd HH:mm:ss:SSS")
    c.add_argument("--hide-header", action="store_true")
    c.set_defaults(parser=c, perf="consumer")


def run(args: argparse.Namespace) -> int:
    try:
        return run_producer(args) if args.perf == "producer" else run_consumer(args)
    except CommandError as exc:
        print(exc, file=sys.stderr)
        return 1
    except KafkaException as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1


# --- producer ------------------------------------------------------------------------------------

class Stats:
    """Kafka's ProducerPerformance.Stats: windows every 5 s, sampled latencies for percentiles."""

    def __init__(self, num_records: int, interval_ms: int = REPORT_INTERVAL_MS) -> None:
        self.start = self.window_start = _now_ms()
        self.sampling = max(1, num_records // min(num_records, 500000)) if num_records else 1
        self.latencies: list[int] = []
        self.iteration = self.count = self.bytes = self.total_latency = self.max_latency = 0
        self.window_count = self.window_bytes = self.window_total = self.window_max = 0
        self.interval = interval_ms

    def record(self, latency: int, size: int, now: int) -> None:
        self.count += 1
        self.bytes += size
        self.total_latency += latency
        self.max_latency = max(self.max_latency, latency)
        self.window_count += 1
        self.window_bytes += size
        self.window_total += latency
        self.window_max = max(self.window_max, latency)
        if self.iteration % self.sampling == 0:
            self.latencies.append(latency)
        self.iteration += 1
        if now - self.window_start >= self.interval:
            self.print_window()
            self.window_start, self.window_count, self.window_bytes = _now_ms(), 0, 0
            self.window_total = self.window_max = 0

    def print_window(self) -> None:
        elapsed = max(1, _now_ms() - self.window_start)
        print(f"{self.window_count} records sent, {1000.0 * self.window_count / elapsed:.1f} records/sec "
              f"({1000.0 * self.window_bytes / elapsed / (1024 * 1024):.2f} MB/sec), "
              f"{self.window_total / max(1, self.window_count):.1f} ms avg latency, "
              f"{float(self.window_max):.1f} ms max latency.", flush=True)

    def print_total(self) -> None:
        elapsed = max(1, _now_ms() - self.start)
        ordered = sorted(self.latencies) or [0]
        p = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.5, 0.95, 0.99, 0.999)]
        print(f"{self.count} records sent, {1000.0 * self.count / elapsed:.1f} records/sec "
              f"({1000.0 * self.bytes / elapsed / (1024 * 1024):.2f} MB/sec), "
              f"{self.total_latency / max(1, self.count):.2f} ms avg latency, {float(self.max_latency):.2f} ms max "
              f"latency, {p[0]} ms 50th, {p[1]} ms 95th, {p[2]} ms 99th, {p[3]} ms 99.9th.", flush=True)


def _now_ms() -> int:
    return int(time.time() * 1000)


class Throttler:
    """Kafka's ThroughputThrottler: sleep when ahead of the target rate."""

    def __init__(self, target: float, start_ms: int) -> None:
        self.target, self.start = target, start_ms
        self.sleep_ns = 1e9 / target if target > 0 else 0

    def throttle_if_needed(self, sent: int, now_ms: int) -> None:
        if self.target <= 0:
            return
        elapsed = (now_ms - self.start) / 1000
        if elapsed <= 0 or sent / elapsed <= self.target:
            return
        ahead = sent / self.target - elapsed
        if ahead > 0:
            time.sleep(ahead)


def _payloads(args) -> tuple[list[bytes] | None, bytes | None]:
    if args.payload_file:
        with open(args.payload_file, "rb") as f:
            delimiter = args.payload_delimiter.encode().decode("unicode_escape").encode()
            payloads = [p for p in f.read().split(delimiter) if p]
        print(f"Reading payloads from: {args.payload_file}")
        print(f"Number of messages read: {len(payloads)}")
        if not payloads:
            raise CommandError("File does not contain any payloads")
        return payloads, None
    if args.record_size is not None:
        rng = random.Random(0)
        return None, bytes(rng.randrange(26) + 65 for _ in range(args.record_size))
    return None, None


def run_producer(args) -> int:
    p = args.parser
    for name in ("topic", "num_records", "throughput"):
        if getattr(args, name) is None:
            usage_error(p, f"argument --{name.replace('_', '-')} is required")
    if sum(bool(x) for x in (args.record_size is not None, args.payload_file, args.payload_monotonic)) != 1:
        usage_error(p, "Either --record-size or --payload-file or --payload-monotonic must be specified but not "
                       "more than one.")
    merged = {**load_properties(args.producer_config), **property_pairs(args.producer_props)}
    if args.bootstrap_server:
        merged["bootstrap.servers"] = args.bootstrap_server
    if not merged.get("bootstrap.servers"):
        raise CommandError("bootstrap.servers must be given: --producer-props bootstrap.servers=HOST:PORT")
    config = rdkafka_config(merged, PRODUCER_NAMES)
    if args.transactional_id:
        config["transactional.id"] = args.transactional_id
    producer = Producer(config)
    payload_list, fixed = _payloads(args)
    stats = Stats(args.num_records)
    throttler = Throttler(args.throughput, stats.start)
    if args.transactional_id:
        producer.init_transactions()
    in_transaction, transaction_start = False, 0
    rng = random.Random(0)
    for i in range(args.num_records):
        if payload_list is not None:
            payload = payload_list[rng.randrange(len(payload_list))]
        elif fixed is not None:
            payload = fixed
        else:
            payload = str(i).encode()
        if args.transactional_id and not in_transaction:
            producer.begin_transaction()
            in_transaction, transaction_start = True, _now_ms()
        sent_at = _now_ms()
        callback = _callback(stats, sent_at, len(payload))
        while True:
            try:
                producer.produce(args.topic, value=payload, on_delivery=callback)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
        if in_transaction and args.transaction_duration_ms <= sent_at - transaction_start:
            producer.commit_transaction()
            in_transaction = False
        throttler.throttle_if_needed(i + 1, sent_at)
    if in_transaction:
        producer.commit_transaction()
    producer.flush()
    stats.print_total()
    if args.print_metrics:
        _print_metrics({"records-sent": stats.count, "bytes-sent": stats.bytes})
    return 0


def _callback(stats: Stats, sent_at: int, size: int):
    def done(err, msg) -> None:
        now = _now_ms()
        if err is not None:
            print(f"Error when sending message to topic {msg.topic()}: {err.str()}", file=sys.stderr)
            return
        stats.record(now - sent_at, size, now)
    return done


def _print_metrics(metrics: dict) -> None:
    width = max(len(k) for k in metrics)
    print("\nMetric Name" + " " * (width - 10) + "Value")
    for name, value in sorted(metrics.items()):
        print(f"{name.ljust(width)} : {value}")


# --- consumer ------------------------------------------------------------------------------------

def _java_date_format(fmt: str) -> str:
    """Kafka's SimpleDateFormat pattern (the default one and its common letters) for strftime."""
    out = fmt
    for java, python in (("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"),
                         ("SSS", "{ms}")):
        out = out.replace(java, python)
    return out


def _date(ms: int, fmt: str) -> str:
    moment = datetime.fromtimestamp(ms / 1000)
    return moment.strftime(fmt).replace("{ms}", f"{ms % 1000:03d}")


def run_consumer(args) -> int:
    p = args.parser
    for name in ("bootstrap_server", "topic", "messages"):
        if getattr(args, name) is None:
            usage_error(p, f"Missing required argument \"[{name.replace('_', '-')}]\"")
    merged = load_properties(args.consumer_config)
    merged["bootstrap.servers"] = args.bootstrap_server
    group = args.group or merged.get("group.id") or f"perf-consumer-{random.randrange(100000)}"
    config = rdkafka_config(merged)
    config.update({"group.id": group, "enable.auto.commit": True, "auto.offset.reset":
                   "latest" if args.from_latest else "earliest", "fetch.max.bytes": max(args.fetch_size, 1024),
                   "client.id": merged.get("client.id", "perf-consumer-client")})
    fmt = _java_date_format(args.date_format)
    new_fields = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
    if not args.hide_header:
        print(f"{'time, threadId' if args.show_detailed_stats else 'start.time, end.time'}, data.consumed.in.MB, "
              f"MB.sec, data.consumed.in.nMsg, nMsg.sec{new_fields}")
    joined = [None]
    consumer = Consumer(config)
    start = _now_ms()
    join_started = start

    def on_assign(consumer_, partitions) -> None:
        if joined[0] is None:
            joined[0] = _now_ms() - join_started
    consumer.subscribe([args.topic], on_assign=on_assign)
    count = size = 0
    last_record = _now_ms()
    last_report, last_count, last_size = start, 0, 0
    while count < args.messages:
        messages = consumer.consume(min(500, args.messages - count), 0.1)
        now = _now_ms()
        if not messages:
            if now - last_record > args.timeout:
                print(f"WARNING: Exiting before consuming the expected number of messages: timeout ({args.timeout} "
                      "ms) exceeded. You can use the --timeout option to increase the timeout.", file=sys.stderr)
                break
            continue
        last_record = now
        for m in messages:
            if m.error() is None:
                count += 1
                size += len(m.value() or b"")
        if args.show_detailed_stats and now - last_report >= args.reporting_interval:
            _detail(fmt, now, last_report, count - last_count, size - last_size, joined[0] or 0)
            last_report, last_count, last_size = now, count, size
    end = _now_ms()
    consumer.close()
    elapsed = max(0.001, (end - start) / 1000)
    rebalance = joined[0] or 0
    fetch_ms = max(1, (end - start) - rebalance)
    mb = size / (1024 * 1024)
    if not args.show_detailed_stats:
        print(f"{_date(start, fmt)}, {_date(end, fmt)}, {mb:.4f}, {mb / elapsed:.4f}, {count}, {count / elapsed:.4f}, "
              f"{rebalance}, {fetch_ms}, {mb / (fetch_ms / 1000):.4f}, {count / (fetch_ms / 1000):.4f}")
    if args.print_metrics:
        _print_metrics({"records-consumed-total": count, "bytes-consumed-total": size})
    return 0


def _detail(fmt: str, now: int, last: int, messages: int, size: int, rebalance: int) -> None:
    elapsed = max(1, now - last) / 1000
    mb = size / (1024 * 1024)
    print(f"{_date(now, fmt)}, 0, {mb:.4f}, {mb / elapsed:.4f}, {messages}, {messages / elapsed:.4f}, {rebalance}, "
          f"{int(elapsed * 1000) - rebalance}, {mb / elapsed:.4f}, {messages / elapsed:.4f}")
