"""`python -m engine groups`: --list, --describe (kafka-consumer-groups.sh's columns) and
--reset-offsets (dry run by default), run as a real command against a real engine."""
from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, timezone

from confluent_kafka import Consumer
from kafka import KafkaConsumer, KafkaProducer

from engine.tools.consumer_groups import lag
from tests.support.engine_process import ROOT
from tests.support.groups import GroupClient, create_topic
from tests.support.waiting import wait_until

# An hour ago, on a whole second: recent enough that retention (7 days) never deletes the
# fixture records on the session's shared engine, as a fixed 2023 stamp would.
BASE_TS = (int(time.time()) - 3600) * 1000


def groups_cli(engine, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", "groups", "--bootstrap", engine.bootstrap, *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def table(output: str) -> list[dict[str, str]]:
    """The rows of the table that follows the first blank line, as dicts by column."""
    lines = [line for line in output.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith("GROUP "))
    header = lines[start].split()
    return [dict(zip(header, line.split())) for line in lines[start + 1:]]


def setup_group(engine, group_id: str, topic: str) -> None:
    """Two partitions of 10 records each (timestamps BASE_TS + i s); the group committed 6 and 4."""
    create_topic(engine.bootstrap, topic, 2)
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap)
    for partition in range(2):
        for i in range(10):
            producer.send(topic, value=b"v", partition=partition, timestamp_ms=BASE_TS + i * 1000)
    producer.flush(15)
    producer.close()
    client = GroupClient(engine, group_id)
    try:
        assert client.commit({(topic, 0): 6, (topic, 1): 4}) == {(topic, 0): 0, (topic, 1): 0}
    finally:
        client.close()


def committed(engine, group_id: str, topic: str) -> dict[int, int]:
    client = GroupClient(engine, group_id)
    try:
        return {p: o for (_, p), o in client.fetch([(topic, 0), (topic, 1)])[1].items()}
    finally:
        client.close()


def test_lag_is_the_high_watermark_minus_the_committed_offset():
    assert lag(10, 6) == 4
    assert lag(10, None) is None and lag(None, 3) is None and lag(10, -1) is None


def test_list_and_describe_an_inactive_group(group_cluster, group_id, topic_name):
    setup_group(group_cluster, group_id, topic_name)
    listed = groups_cli(group_cluster, "--list")
    assert listed.returncode == 0, listed.stderr
    assert group_id in listed.stdout.split()
    described = groups_cli(group_cluster, "--describe", group_id)
    assert described.returncode == 0, described.stderr
    assert f"Consumer group '{group_id}' has no active members." in described.stdout
    header = [line for line in described.stdout.splitlines() if line.startswith("GROUP")][0].split()
    assert header == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                      "HOST", "CLIENT-ID"]
    assert table(described.stdout) == [
        {"GROUP": group_id, "TOPIC": topic_name, "PARTITION": "0", "CURRENT-OFFSET": "6", "LOG-END-OFFSET": "10",
         "LAG": "4", "CONSUMER-ID": "-", "HOST": "-", "CLIENT-ID": "-"},
        {"GROUP": group_id, "TOPIC": topic_name, "PARTITION": "1", "CURRENT-OFFSET": "4", "LOG-END-OFFSET": "10",
         "LAG": "6", "CONSUMER-ID": "-", "HOST": "-", "CLIENT-ID": "-"}]


def test_describe_shows_the_members_holding_partitions(group_cluster, group_id, topic_name):
    setup_group(group_cluster, group_id, topic_name)
    consumer = KafkaConsumer(topic_name, bootstrap_servers=group_cluster.bootstrap, group_id=group_id,
                             client_id="cli-test-consumer", enable_auto_commit=False, session_timeout_ms=10000,
                             heartbeat_interval_ms=200)
    try:
        deadline = time.monotonic() + 30
        while len(consumer.assignment()) < 2 and time.monotonic() < deadline:
            consumer.poll(timeout_ms=100, max_records=1)
        consumer.pause(*consumer.assignment())
        described = groups_cli(group_cluster, "--describe", group_id)
        refused = groups_cli(group_cluster, "--reset-offsets", group_id, "--topic", topic_name, "--to-earliest",
                             "--execute")
    finally:
        consumer.close(autocommit=False)
    assert described.returncode == 0, described.stderr
    rows = table(described.stdout)
    assert [(r["PARTITION"], r["CURRENT-OFFSET"], r["LAG"]) for r in rows] == [("0", "6", "4"), ("1", "4", "6")]
    assert {r["CLIENT-ID"] for r in rows} == {"cli-test-consumer"} and {r["HOST"] for r in rows} == {"/127.0.0.1"}
    assert all(r["CONSUMER-ID"].startswith("cli-test-consumer-") for r in rows)
    assert refused.returncode == 1 and "inactive" in refused.stderr and "Stable" in refused.stderr
    assert committed(group_cluster, group_id, topic_name) == {0: 6, 1: 4}


def test_reset_offsets_is_a_dry_run_unless_executed(group_cluster, group_id, topic_name):
    setup_group(group_cluster, group_id, topic_name)
    dry = groups_cli(group_cluster, "--reset-offsets", group_id, "--topic", topic_name, "--to-earliest")
    assert dry.returncode == 0, dry.stderr
    assert [(r["PARTITION"], r["NEW-OFFSET"]) for r in table(dry.stdout)] == [("0", "0"), ("1", "0")]
    assert committed(group_cluster, group_id, topic_name) == {0: 6, 1: 4}  # nothing changed

    def reset(*how: str, topic: str = topic_name) -> dict[int, int]:
        done = groups_cli(group_cluster, "--reset-offsets", group_id, "--topic", topic, *how, "--execute")
        assert done.returncode == 0, done.stderr
        after = committed(group_cluster, group_id, topic_name)
        assert {int(r["PARTITION"]): int(r["NEW-OFFSET"]) for r in table(done.stdout)} == \
            {p: after[p] for p in map(int, [r["PARTITION"] for r in table(done.stdout)])}
        return after

    assert reset("--to-earliest") == {0: 0, 1: 0}
    assert reset("--to-latest") == {0: 10, 1: 10}
    assert reset("--to-offset", "3") == {0: 3, 1: 3}
    assert reset("--to-offset", "99") == {0: 10, 1: 10}  # clamped to the log end
    moment = datetime.fromtimestamp((BASE_TS + 4500) / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    assert reset("--to-datetime", moment + "Z") == {0: 5, 1: 5}  # first record at or after the time
    assert reset("--to-datetime", "2100-01-01T00:00:00.000Z") == {0: 10, 1: 10}  # none after: the log end
    assert reset("--to-earliest", topic=f"{topic_name}:1") == {0: 10, 1: 0}  # one partition only


def test_errors_are_reported_with_a_nonzero_exit(group_cluster, topic_name):
    unknown = groups_cli(group_cluster, "--describe", "no-such-group")
    assert unknown.returncode == 1 and "does not exist" in unknown.stderr
    incomplete = groups_cli(group_cluster, "--reset-offsets", "g", "--topic", topic_name)
    assert incomplete.returncode == 2 and "--to-earliest" in incomplete.stderr


def test_describe_shows_the_members_of_a_consumer_protocol_group(engine_cluster, topic_name):
    """KIP-848 groups are described with ConsumerGroupDescribe: each partition's owner shows.
    The group starts as an admin's commit (an empty classic group) and keeps those offsets
    when the first consumer-protocol member joins."""
    group_id = f"cli-{topic_name}"
    setup_group(engine_cluster, group_id, topic_name)
    consumer = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": group_id,
                         "group.protocol": "consumer", "client.id": "cli-kip848-client",
                         "enable.auto.commit": False})
    owned: set = set()
    consumer.subscribe([topic_name], on_assign=lambda c, ps: owned.update(tp.partition for tp in ps))

    def assigned() -> bool:
        consumer.poll(0.1)
        return owned == {0, 1}
    try:
        wait_until(assigned, timeout=60, message="both partitions assigned")
        result = groups_cli(engine_cluster, "--describe", group_id)
    finally:
        consumer.close()
    assert result.returncode == 0, result.stderr
    rows = table(result.stdout)
    assert [(r["PARTITION"], r["CURRENT-OFFSET"], r["CLIENT-ID"]) for r in rows] == [
        ("0", "6", "cli-kip848-client"), ("1", "4", "cli-kip848-client")]
