"""How long another broker's clients wait while one client's huge request is worked on.

A 2-broker engine in its own process (its brokers share one event loop). A pinger sends
ApiVersions to broker 1 back to back and times each round trip: first idle, then while
broker 0 works on each big request in turn - a Metadata request naming 1M topics (9.5 MiB,
the reproduction), and ListOffsets, Fetch, OffsetFetch, DeleteTopics, CreateTopics naming
--names partitions or topics, and DescribeConfigs of one topic 2,000 times. Prints, per request, its
size and answer time, and the pinger's p50 / p99 / max beside the idle figures. The target
is an ApiVersions p99 of at most 100 ms while the big requests run.
Peer: the idle figures of the same run (a Kafka cluster is no fairer peer here: its request
handler threads and its network threads are separate).

    .venv/bin/python benchmarks/big_requests.py [--metadata-names 1000000] [--names 300000]
"""
from __future__ import annotations

import argparse
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kafka.protocol.admin import DeleteTopicsRequest, DeleteTopicsResponse  # noqa: E402
from kafka.protocol.metadata import (ApiVersionsRequest, ApiVersionsResponse, MetadataRequest,  # noqa: E402
                                     MetadataResponse)

from tests.engine.protocol import test_big_requests as shapes  # noqa: E402
from tests.engine.protocol.test_bad_input import create_topic  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402

IDLE_S = 5.0


class Pinger(threading.Thread):
    """ApiVersions round trips back to back on one connection, each timed."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.samples: list[tuple[float, float]] = []      # (answered at, round trip)
        self.stopping = threading.Event()

    def run(self) -> None:
        client = RawClient(self.port, timeout=600)
        request = ApiVersionsRequest(client_software_name="pinger", client_software_version="1")
        try:
            while not self.stopping.is_set():
                started = time.perf_counter()
                client.request(request, 3, ApiVersionsResponse)
                now = time.perf_counter()
                self.samples.append((now, now - started))
        finally:
            client.close()

    def between(self, start: float, end: float) -> list[float]:
        return [rtt for at, rtt in self.samples if start <= at <= end]


def metadata_v9(names: list[str]):
    """As the reproduction: 1M names of 8 characters, no topic ids: 9.5 MiB."""
    T = MetadataRequest.MetadataRequestTopic
    return MetadataRequest(topics=[T(name=n) for n in names], allow_auto_topic_creation=False,
                           include_topic_authorized_operations=False), 9, MetadataResponse


def delete_topics(names: list[str]):
    return DeleteTopicsRequest(topic_names=names, timeout_ms=60000), 4, DeleteTopicsResponse


def framed(build, names: list[str]) -> tuple[str, bytes]:
    request, version, _ = build(names)
    request.with_header(correlation_id=1, client_id="big")
    return type(request).__name__.removesuffix("Request"), request.encode(version=version, header=True, framed=True)


def send_and_wait(port: int, frame: bytes) -> float:
    """Send the frame and read the answer's bytes without keeping them (decoding or even
    joining them here would hold this process's GIL from the pinger); the seconds until the
    answer's last byte."""
    with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
        started = time.perf_counter()
        sock.sendall(frame)
        head = bytearray(4)
        _drain(sock, 4, head)
        _drain(sock, struct.unpack(">i", head)[0])
        return time.perf_counter() - started


def _drain(sock: socket.socket, size: int, into: bytearray | None = None) -> None:
    buffer = memoryview(bytearray(1 << 20))
    done = 0
    while done < size:
        got = sock.recv_into(buffer, min(size - done, len(buffer)))
        if not got:
            raise ConnectionError("closed before the answer was complete")
        if into is not None:
            into[done:done + got] = buffer[:got]
        done += got


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def line(label: str, rtts: list[float]) -> str:
    return (f"p50 {statistics.median(rtts) * 1000:7.1f} ms  p99 {percentile(rtts, 0.99) * 1000:7.1f} ms  "
            f"max {max(rtts) * 1000:7.1f} ms  ({len(rtts)} round trips) {label}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--metadata-names", type=int, default=1_000_000)
    parser.add_argument("--names", type=int, default=300_000)
    args = parser.parse_args()
    print("preparing the requests ...", flush=True)
    many = [f"t{i:07d}" for i in range(max(args.metadata_names, args.names))]
    requests = [framed(metadata_v9, many[:args.metadata_names])]
    requests += [framed(build, many[:args.names]) for build in (shapes.list_offsets, shapes.fetch,
                                                                shapes.offset_fetch, delete_topics,
                                                                shapes.create_topics)]
    requests.append(framed(shapes.describe_configs, []))
    with tempfile.TemporaryDirectory() as tmp:
        engine = EngineProcess(Path(tmp) / "data", brokers=2, admin=False,
                               configs={"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"})
        engine.start(timeout=60)
        try:
            return run(engine, requests)
        finally:
            engine.kill()


def run(engine: EngineProcess, requests: list[tuple[str, bytes]]) -> int:
    setup = RawClient(engine.ports[0])
    assert create_topic(setup, shapes.TOPIC) == 0
    setup.close()
    # The group's coordinator: __consumer_offsets has one partition, on broker 0 or 1.
    worker = shapes.coordinator_of(engine.ports[0], shapes.GROUP)
    other = 1 - worker
    pinger = Pinger(engine.ports[other])
    pinger.start()
    time.sleep(IDLE_S)
    idle = pinger.between(0, time.perf_counter())
    print(f"ApiVersions to broker {other}, idle:                            {line('', idle)}")
    worst = []
    for name, frame in requests:
        started = time.perf_counter()
        elapsed = send_and_wait(engine.ports[worker], frame)
        during = pinger.between(started, time.perf_counter())
        worst.append(percentile(during, 0.99))
        print(f"  while broker {worker} answers {name:16} ({len(frame) / 2**20:5.1f} MiB) in {elapsed:6.1f} s: "
              f"{line('', during)}")
    pinger.stopping.set()
    pinger.join(60)
    print(f"worst p99 while big requests ran: {max(worst) * 1000:.1f} ms (target <= 100 ms); idle p99 "
          f"{percentile(idle, 0.99) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
