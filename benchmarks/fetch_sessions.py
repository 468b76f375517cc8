"""Fetch sessions (KIP-227): what an incremental fetch saves a consumer of many partitions.

One topic of 1,000 partitions, all but ten idle. A client fetches all of them over and over
(min_bytes 0, so each Fetch is answered at once), and between two fetches one record lands on
each of ten partitions. Three runs in one go, the same Fetch v12 requests from the same raw
client:

- the engine, fetching in an incremental session (what kafka-python and Java clients do);
- the engine, full fetches (session_id 0, epoch -1: what librdkafka does);
- the peer, librdkafka's mock cluster, which has no fetch sessions: full fetches.

Prints, per fetch, the request and response bytes and the round trip, and the ratios.

    .venv/bin/python benchmarks/fetch_sessions.py [--partitions 1000] [--fetches 300]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Producer
from kafka.protocol.consumer import FetchRequest, FetchResponse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.produce_consume import start_mock_cluster  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402

TOPIC = "sessions"
BUSY = 10
F = FetchRequest.FetchTopic


def fetch_request(offsets: dict[int, int], *, session_id: int, epoch: int) -> FetchRequest:
    topics = [F(topic=TOPIC, topic_id=uuid.UUID(int=0), partitions=[F.FetchPartition(
        partition=p, current_leader_epoch=-1, fetch_offset=o, log_start_offset=-1, last_fetched_epoch=-1,
        partition_max_bytes=1 << 20) for p, o in offsets.items()])] if offsets else []
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0,
                        session_id=session_id, session_epoch=epoch, topics=topics, forgotten_topics_data=[],
                        rack_id="")


def run(port: int, bootstrap: str, partitions: int, fetches: int, *, incremental: bool) -> dict:
    """Fetch `fetches` times; between two, one record on each of the BUSY first partitions."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    client = RawClient(port, timeout=60)
    offsets = {p: 0 for p in range(partitions)}
    session_id, epoch = 0, 0 if incremental else -1
    sent_bytes, received_bytes, seconds = [], [], []
    changed = dict(offsets)
    try:
        for _ in range(fetches):
            for p in range(BUSY):
                producer.produce(TOPIC, value=b"x" * 100, partition=p)
            producer.flush(10)
            asked = changed if (incremental and session_id) else offsets
            request = fetch_request(asked, session_id=session_id, epoch=epoch)
            client.correlation_id += 1
            request.with_header(correlation_id=client.correlation_id, client_id=client.client_id)
            frame = request.encode(version=12, header=True, framed=True)
            started = time.perf_counter()
            client.send_bytes(frame)
            answer = client.read_frame()
            seconds.append(time.perf_counter() - started)
            sent_bytes.append(len(frame))
            received_bytes.append(len(answer) + 4)
            response = FetchResponse.decode(answer, version=12, header=True)
            if response.error_code:
                raise RuntimeError(f"fetch error {response.error_code}")
            changed = {}
            for topic in response.responses:
                for part in topic.partitions:
                    if part.high_watermark > offsets[part.partition_index]:
                        offsets[part.partition_index] = changed[part.partition_index] = part.high_watermark
            if incremental:
                session_id, epoch = response.session_id, epoch + 1 if response.session_id else 0
    finally:
        client.close()
    return {"sent": statistics.median(sent_bytes), "received": statistics.median(received_bytes),
            "ms": statistics.median(seconds) * 1000, "records": sum(offsets.values())}


def create_topic(bootstrap: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].result(60)
    time.sleep(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--fetches", type=int, default=300)
    args = parser.parse_args()
    engine = EngineProcess(Path(tempfile.mkdtemp(prefix="fetch-sessions-")) / "data", brokers=1, admin=False).start()
    try:
        create_topic(engine.bootstrap, args.partitions)
        session = run(engine.ports[0], engine.bootstrap, args.partitions, args.fetches, incremental=True)
        full = run(engine.ports[0], engine.bootstrap, args.partitions, args.fetches, incremental=False)
    finally:
        engine.terminate()
    mock_process, mock_bootstrap = start_mock_cluster([TOPIC], partitions=args.partitions)
    try:
        mock = run(int(mock_bootstrap.split(",")[0].rsplit(":", 1)[1]), mock_bootstrap, args.partitions,
                   args.fetches, incremental=False)
    finally:
        mock_process.stdin.close()
        mock_process.wait(30)
    print(f"{args.partitions} partitions, {BUSY} with a new record before each fetch, {args.fetches} fetches "
          "(medians per fetch)")
    print(f"{'':34}{'request B':>12}{'response B':>12}{'round trip ms':>15}")
    for label, figures in (("engine, incremental session", session), ("engine, full fetches", full),
                           ("librdkafka mock, full fetches", mock)):
        print(f"{label:34}{figures['sent']:>12,.0f}{figures['received']:>12,.0f}{figures['ms']:>15.2f}")
    print(f"session / full on the engine: request {session['sent'] / full['sent']:.3f}x, response "
          f"{session['received'] / full['received']:.3f}x, round trip {session['ms'] / full['ms']:.2f}x")
    print(f"engine session / mock full: round trip {session['ms'] / mock['ms']:.2f}x; engine full / mock full: "
          f"{full['ms'] / mock['ms']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
