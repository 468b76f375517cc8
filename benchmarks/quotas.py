"""Byte-rate quotas: how closely a producer held to `producer_byte_rate` = 1 MB/s keeps to it.

A confluent-kafka producer (client id `bench-quota`, records of 1,000 bytes to a topic of 6
partitions, as fast as its queue allows) runs for --seconds against a 1-broker engine whose
AlterClientQuotas set its quota, and prints the rate the broker acknowledged, overall and after the first quota window
(Kafka lets a new client send a window's worth - 11 s of quota - before throttling it), next
to the quota, with the throttle events librdkafka reported.

The peer: librdkafka's mock cluster (`test.mock.num.brokers`) does not implement client quotas
(its ApiVersions lists no AlterClientQuotas, key 49; probed below, in the same run), so there is
no throttled peer figure; the same producer's unthrottled rate against it is printed for scale.

    .venv/bin/python benchmarks/quotas.py [--seconds N] [--quota BYTES_PER_S]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from confluent_kafka import Producer  # noqa: E402
from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest, AlterClientQuotasResponse  # noqa: E402
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse  # noqa: E402

from benchmarks.produce_consume import create_topic  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402

CLIENT_ID, TOPIC, SIZE = "bench-quota", "quota-bench", 1000
FIRST_WINDOW_S = 11


def set_producer_quota(port: int, quota: float) -> None:
    E = AlterClientQuotasRequest.EntryData
    request = AlterClientQuotasRequest(validate_only=False, entries=[E(
        entity=[E.EntityData(entity_type="client-id", entity_name=CLIENT_ID)],
        ops=[E.OpData(key="producer_byte_rate", value=quota, remove=False)])])
    client = RawClient(port)
    try:
        (entry,) = client.request(request, 1, AlterClientQuotasResponse).entries
        assert entry.error_code == 0, entry
    finally:
        client.close()


def run_producer(config: dict, seconds: float) -> tuple[list[tuple[float, int]], list[int]]:
    """(time, bytes) of every acknowledged record, and the throttle times reported (ms)."""
    acked: list[tuple[float, int]] = []
    throttles: list[int] = []
    started = time.monotonic()

    def delivered(err, message) -> None:
        if err is None:
            acked.append((time.monotonic() - started, len(message.value())))

    producer = Producer({**config, "client.id": CLIENT_ID, "linger.ms": 5, "queue.buffering.max.kbytes": 4096,
                         "throttle_cb": lambda event: throttles.append(round(event.throttle_time * 1000)), "log_level": 3})
    payload = b"q" * SIZE
    while time.monotonic() - started < seconds:
        try:
            producer.produce(TOPIC, payload, on_delivery=delivered)
        except BufferError:
            producer.poll(0.05)
        producer.poll(0)
    producer.flush(120)
    return acked, throttles


def rates(acked: list[tuple[float, int]]) -> tuple[float, float]:
    """Bytes/s overall, and after the first window (the burst Kafka's quota allows)."""
    end = max(t for t, _ in acked)
    total = sum(n for _, n in acked)
    later = sum(n for t, n in acked if t >= FIRST_WINDOW_S)
    return total / end, later / max(end - FIRST_WINDOW_S, 1e-9)


def mock_supports_quotas(producer_config: dict) -> tuple[bool, str]:
    probe = Producer(producer_config)
    broker = next(iter(probe.list_topics(timeout=10).brokers.values()))
    client = RawClient(broker.port)
    try:
        keys = {k.api_key for k in client.request(ApiVersionsRequest(), 0, ApiVersionsResponse).api_keys}
    finally:
        client.close()
    return 49 in keys, f"{broker.host}:{broker.port}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--quota", type=float, default=1_000_000.0, help="producer_byte_rate, bytes/s")
    args = parser.parse_args()
    print(f"confluent-kafka producer, {SIZE}-byte records, {args.seconds:.0f} s, producer_byte_rate "
          f"{args.quota:,.0f} B/s; load average at start {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-quotas-") as data_dir:
        engine = EngineProcess(Path(data_dir) / "data", brokers=1).start()
        try:
            create_topic(engine.bootstrap, TOPIC, replication=1)
            set_producer_quota(engine.ports[0], args.quota)
            acked, throttles = run_producer({"bootstrap.servers": engine.bootstrap}, args.seconds)
        finally:
            engine.terminate(timeout=120)
    overall, steady = rates(acked)
    print(f"engine:  overall {overall:>12,.0f} B/s ({overall / args.quota:.2f}x quota)   after the first "
          f"{FIRST_WINDOW_S} s {steady:>12,.0f} B/s ({steady / args.quota:.2f}x quota)   "
          f"{len(throttles)} throttle events, max {max(throttles, default=0)} ms")
    mock = {"test.mock.num.brokers": 1, "log_level": 3}
    supported, where = mock_supports_quotas(mock)
    if supported:
        print(f"librdkafka mock cluster ({where}) lists AlterClientQuotas; this benchmark does not drive it yet")
    else:
        print(f"librdkafka mock cluster ({where}): no client quotas (ApiVersions has no AlterClientQuotas), "
              "so no throttled peer figure")
    acked, _ = run_producer(mock, min(args.seconds, 10.0))
    unthrottled, _ = rates(acked)
    print(f"mock:    unthrottled {unthrottled:>12,.0f} B/s (the same producer, no quota; for scale)   "
          f"load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
