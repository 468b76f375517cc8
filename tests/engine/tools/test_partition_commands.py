"""get-offsets, delete-records, log-dirs and leader-election against the engine, their output
in the shape of Kafka's scripts (lines, JSON)."""
from __future__ import annotations

import json

from kafka import KafkaProducer

from tests.engine.tools.conftest import run_tool


def _fill(engine, topic: str, partitions: int, per_partition: int) -> None:
    run_tool(engine, "topics", "--create", "--topic", topic, "--partitions", str(partitions), "--replication-factor",
             "2")
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap)
    for p in range(partitions):
        for i in range(per_partition):
            producer.send(topic, value=b"x" * 100, partition=p)
    producer.flush(30)
    producer.close()


def test_get_offsets_and_delete_records(group_cluster, topic_name, tmp_path):
    _fill(group_cluster, topic_name, 3, 10)
    latest = run_tool(group_cluster, "get-offsets", "--topic", topic_name)
    assert latest.stdout.splitlines() == [f"{topic_name}:{p}:10" for p in range(3)]
    ranged = run_tool(group_cluster, "get-offsets", "--topic-partitions", f"{topic_name}:1-3", "--time", "-2")
    assert ranged.stdout.splitlines() == [f"{topic_name}:1:0", f"{topic_name}:2:0"]
    bad = run_tool(group_cluster, "get-offsets", "--topic", topic_name, "--time", "yesterday")
    assert bad.returncode == 1 and bad.stderr.startswith("Error occurred: Malformed time argument yesterday.")

    spec = tmp_path / "offsets.json"
    spec.write_text(json.dumps({"partitions": [{"topic": topic_name, "partition": 0, "offset": 4},
                                               {"topic": topic_name, "partition": 7, "offset": 1}], "version": 1}))
    deleted = run_tool(group_cluster, "delete-records", "--offset-json-file", str(spec))
    lines = deleted.stdout.splitlines()
    assert lines[:3] == ["Executing records delete operation", "Records delete operation completed:",
                         f"partition: {topic_name}-0\tlow_watermark: 4"]
    assert lines[3].startswith(f"partition: {topic_name}-7\terror: org.apache.kafka.common.errors."
                               "UnknownTopicOrPartitionException")
    assert deleted.returncode == 1
    earliest = run_tool(group_cluster, "get-offsets", "--topic", topic_name, "--partitions", "0", "--time", "earliest")
    assert earliest.stdout == f"{topic_name}:0:4\n"
    spec.write_text(json.dumps({"partitions": [{"topic": topic_name, "partition": 0, "offset": 5},
                                               {"topic": topic_name, "partition": 0, "offset": 6}]}))
    duplicate = run_tool(group_cluster, "delete-records", "--offset-json-file", str(spec))
    assert (duplicate.returncode, duplicate.stderr.strip()) == (
        1, f"Offset json file contains duplicate topic partitions: {topic_name}-0")


def test_log_dirs_prints_kafkas_json(group_cluster, topic_name):
    _fill(group_cluster, topic_name, 2, 5)
    described = run_tool(group_cluster, "log-dirs", "--describe", "--topic-list", topic_name)
    head, received, document = described.stdout.splitlines()
    assert head == "Querying brokers for log directories information"
    assert received == "Received log directory information from brokers 0,1,2"
    data = json.loads(document)
    assert data["version"] == 1 and [b["broker"] for b in data["brokers"]] == [0, 1, 2]
    replicas = [p for b in data["brokers"] for d in b["logDirs"] for p in d["partitions"]]
    assert sorted(p["partition"] for p in replicas) == sorted([f"{topic_name}-0"] * 2 + [f"{topic_name}-1"] * 2)
    assert all(set(p) == {"partition", "size", "offsetLag", "isFuture"} and p["size"] > 0 for p in replicas)
    assert all(set(d) == {"partitions", "error", "logDir"} and d["error"] is None
               for b in data["brokers"] for d in b["logDirs"])
    missing = run_tool(group_cluster, "log-dirs", "--describe", "--broker-list", "7")
    assert (missing.returncode, missing.stderr.strip()) == (
        1, "ERROR: The given brokers do not exist from --broker-list: 7. Current existent brokers: 0,1,2")


def test_leader_election_reports_like_kafka(group_cluster, topic_name, tmp_path):
    _fill(group_cluster, topic_name, 2, 1)
    done = run_tool(group_cluster, "leader-election", "--election-type", "PREFERRED", "--topic", topic_name,
                    "--partition", "0")
    assert (done.returncode, done.stdout) == (0, f"Valid replica already elected for partitions {topic_name}-0\n")
    spec = tmp_path / "election.json"
    spec.write_text(json.dumps({"partitions": [{"topic": topic_name, "partition": 1},
                                               {"topic": "no-such-topic", "partition": 0}]}))
    mixed = run_tool(group_cluster, "leader-election", "--election-type", "preferred", "--path-to-json-file",
                     str(spec))
    assert mixed.returncode == 1
    assert f"Valid replica already elected for partitions {topic_name}-1" in mixed.stdout
    assert ("Error completing leader election (PREFERRED) for partition: no-such-topic-0: "
            "org.apache.kafka.common.errors.UnknownTopicOrPartitionException") in mixed.stdout
    assert mixed.stderr.strip() == "1 replica(s) could not be elected"
    everything = run_tool(group_cluster, "leader-election", "--election-type", "PREFERRED", "--all-topic-partitions")
    assert everything.returncode == 0 and topic_name not in everything.stdout     # nothing needed: nothing listed
    usage = run_tool(group_cluster, "leader-election", "--election-type", "PREFERRED")
    assert (usage.returncode, usage.stderr.strip()) == (1, "One and only one of the following options is required: "
                                                           "all-topic-partitions, topic, path-to-json-file")
