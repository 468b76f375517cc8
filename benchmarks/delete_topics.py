"""How long one DeleteTopics request naming many topics takes on a real engine.

A 1-broker engine in this process (RF 1, so the broker hosts every partition it deletes, and
`--keep` other topics of one partition each stay behind, as on a busy cluster). For each
shape, one CreateTopics makes the topics, then one DeleteTopics names them all; printed: the
wall time to the answer, the time until every deleted log dir is gone from the broker's log
dir, and the longest callback of the event loop (CPU time of its thread, as big_metadata.py
measures it) from the request until the last log dir is gone.
Peer: none in the same run (librdkafka's mock cluster keeps topics in C memory and deletes
no logs); the figures to compare with are the same engine's at other shapes: the time per
topic should not grow with the number of topics.

    .venv/bin/python benchmarks/delete_topics.py [--shapes 1000x1,100x100] [--keep 2000]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kafka.protocol.admin import (CreateTopicsRequest, CreateTopicsResponse,  # noqa: E402
                                  DeleteTopicsRequest, DeleteTopicsResponse)

from benchmarks.big_metadata import CallbackTimer  # noqa: E402
from tests.support.in_process_engine import InProcessEngine  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402

T = CreateTopicsRequest.CreatableTopic


def create(client: RawClient, names: list[str], partitions: int) -> None:
    answer = client.request(CreateTopicsRequest(
        topics=[T(name=n, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])
                for n in names], timeout_ms=600000, validate_only=False), 5, CreateTopicsResponse)
    assert all(t.error_code == 0 for t in answer.topics), "CreateTopics failed"


def wait_for(condition, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def run_shape(running: InProcessEngine, client: RawClient, callbacks: CallbackTimer, prefix: str,
              topics: int, partitions: int) -> tuple[float, float, float, str]:
    names = [f"{prefix}-{i:05d}" for i in range(topics)]
    create(client, names, partitions)
    log_dir = running.engine.data_dir / "broker-0"
    wait_for(lambda: sum(1 for p in log_dir.iterdir() if p.name.startswith(prefix + "-")) == topics * partitions)
    time.sleep(2)                        # the broker's sliced opening of the logs is over
    callbacks.longest = 0.0
    started = time.perf_counter()
    answer = client.request(DeleteTopicsRequest(topic_names=names, timeout_ms=600000), 4, DeleteTopicsResponse)
    answered = time.perf_counter() - started
    assert all(r.error_code == 0 for r in answer.responses), "DeleteTopics failed"
    wait_for(lambda: not any(p.name.startswith(prefix + "-") for p in log_dir.iterdir()))
    gone = time.perf_counter() - started
    time.sleep(0.1)                      # the callback that sent the answer (and the last rename) returns
    return answered, gone, callbacks.longest, callbacks.what


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="1000x1,100x100", help="topics x partitions, comma-separated")
    parser.add_argument("--keep", type=int, default=2000, help="other 1-partition topics left on the broker")
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.shapes.split(",")]
    biggest = max(t * p for t, p in shapes)
    with tempfile.TemporaryDirectory() as tmp, \
            InProcessEngine(Path(tmp), brokers=1, admin=False,
                            configs={"max.partitions": str(biggest + args.keep + 100)}) as running:
        callbacks = CallbackTimer()
        client = RawClient(running.engine.ports[0], timeout=600)
        if args.keep:
            create(client, [f"kept-{i:05d}" for i in range(args.keep)], 1)
        print(f"1 broker, {args.keep} other topics of 1 partition kept")
        for index, (topics, partitions) in enumerate(shapes):
            answered, gone, longest, what = run_shape(running, client, callbacks, f"doomed{index}", topics, partitions)
            print(f"DeleteTopics of {topics:5} topics x {partitions:3} partitions: answered in "
                  f"{answered * 1000:7.0f} ms ({answered / topics * 1e6:6.0f} us a topic); log dirs gone after "
                  f"{gone * 1000:7.0f} ms; longest callback {longest * 1000:4.0f} ms CPU ({what})")
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
