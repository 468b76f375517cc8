"""A file-to-file pipeline on two distributed workers: 100,000 lines go through
FileStreamSource, a topic and FileStreamSink, and the worker running the sink task is killed
with -9 halfway. Every line arrives; a line comes twice only when it was sent or written after
the killed worker's last offset commit (Connect's at-least-once: at most one flush interval
of work is redone), and the test counts those duplicates."""
from __future__ import annotations

import json
import re
from collections import Counter

from confluent_kafka import Consumer, TopicPartition

from tests.support.connect_worker import ConnectWorker, request, running, start_all
from tests.support.groups import create_topic
from tests.support.waiting import wait_until

LINES = 100_000
WIDTH = len(f"line-{0:06d}\n")
TOPIC = "pipeline-lines"


def _lines(start: int, stop: int) -> str:
    return "".join(f"line-{i:06d}\n" for i in range(start, stop))


def _count_lines(path) -> int:
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def _topic_values(bootstrap: str) -> list[str]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pipeline-check", "enable.auto.commit": False})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        values: list[str] = []
        while len(values) < high:
            for message in consumer.consume(10000, 1.0):
                if message.error() is None:
                    values.append(json.loads(message.value())["payload"])   # JsonConverter, schemas enabled
        return values
    finally:
        consumer.close()


def _last_commit(log: str, pattern: str) -> int | None:
    found = re.findall(pattern, log)
    return int(found[-1]) if found else None


def test_lines_survive_a_worker_killed_midway_with_duplicates_only_after_its_last_commit(connect_engine, tmp_path):
    create_topic(connect_engine.bootstrap, TOPIC, 1)
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text(_lines(0, LINES // 2))
    workers = start_all([ConnectWorker(tmp_path / f"w{i}", connect_engine.bootstrap, group="pipeline", name=f"w{i}")
                         for i in range(2)])
    try:
        for name, config in (("pipeline-source", {"connector.class": "FileStreamSource", "file": str(source_file),
                                                  "topic": TOPIC}),
                             ("pipeline-sink", {"connector.class": "FileStreamSink", "file": str(sink_file),
                                                "topics": TOPIC})):
            code, body, _ = request(workers[0], "POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        source = wait_until(lambda: running(workers[1], "pipeline-source"), 60, message="source running")
        sink = wait_until(lambda: running(workers[1], "pipeline-sink"), 60, message="sink running")

        # Halfway: the sink has written a quarter of the lines and is still writing.
        wait_until(lambda: _count_lines(sink_file) >= LINES // 4, 120, interval=0.01, message="a quarter through")
        victim_id = sink["tasks"][0]["worker_id"]
        victim = next(w for w in workers if w.url.endswith(victim_id))
        survivor = next(w for w in workers if w is not victim)
        source_moved = source["tasks"][0]["worker_id"] == victim_id      # as last read; reported only
        victim.kill()
        with open(source_file, "a") as f:
            f.write(_lines(LINES // 2, LINES))

        expected = {f"line-{i:06d}" for i in range(LINES)}
        wait_until(lambda: set(sink_file.read_text().split()) >= expected, 180, interval=0.2,
                   message="every line in the sink file")
        status = wait_until(lambda: running(survivor, "pipeline-sink"), 60, message="sink running on the survivor")
        assert survivor.url.endswith(status["tasks"][0]["worker_id"])

        written = Counter(sink_file.read_text().split())
        sent = Counter(_topic_values(connect_engine.bootstrap))
        assert set(written) == set(sent) == expected
        victim_log = victim.log_text()

        # Source side: a line sent twice was sent again by the source task's next owner, so the
        # killed worker ran that task, and the line lies after the position it last committed.
        resent = sorted(int(line[5:]) for line, n in sent.items() if n > 1)
        assert all(n <= 2 for n in sent.values())
        if resent:
            assert "WorkerSourceTask{id=pipeline-source-0} Source task finished initialization" in victim_log
            position = _last_commit(victim_log, r"WorkerSourceTask\{id=pipeline-source-0\} Committing offsets for "
                                                r"\d+ acknowledged messages: .*'position': (\d+)\}") or 0
            assert all((i + 1) * WIDTH > position for i in resent), (position, resent[:5])

        # Sink side: a line written once more than it was sent has its record at or after the
        # consumer offset the killed task last committed.
        offsets = {}
        for offset, value in enumerate(_topic_values(connect_engine.bootstrap)):
            offsets.setdefault(value, offset)
        rewritten = sorted(offsets[line] for line, n in written.items() if n > sent[line])
        assert all(written[line] - sent[line] <= 1 for line in written)
        committed = _last_commit(victim_log, r"WorkerSinkTask\{id=pipeline-sink-0\} Committing offsets "
                                             r"synchronously: \{pipeline-lines-0=(\d+)\}") or 0
        assert all(offset >= committed for offset in rewritten), (committed, rewritten[:5])
        print(f"\nduplicates after kill -9: {len(resent)} lines sent twice by the source "
              f"(task moved: {source_moved}), {len(rewritten)} records written twice by the sink "
              f"(last sink commit before the kill: offset {committed})")
    finally:
        for worker in workers:
            if worker.alive():
                worker.terminate()
