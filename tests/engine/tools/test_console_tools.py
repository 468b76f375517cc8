"""`python -m engine console-producer` and `console-consumer`: Kafka's line reader
properties on the way in, the default formatter's on the way out."""
from __future__ import annotations

import re

from confluent_kafka import Producer

from tests.engine.tools.conftest import run_tool

FORMATTED = re.compile(r"^CreateTime:\d{13}\tPartition:0\tOffset:(\d+)\t(.*)\t(.*)\t(.*)$")


def test_keys_and_headers_go_in_and_come_out_formatted(group_cluster, topic_name):
    run_tool(group_cluster, "topics", "--create", "--topic", topic_name)
    produced = run_tool(group_cluster, "console-producer", "--topic", topic_name, "--property", "parse.key=true",
                        "--property", "parse.headers=true", "--property", "null.marker=NULL", "--compression-codec",
                        "lz4", stdin="h1:a,h2:b\tk1\tfirst\nNULL\tk2\tNULL\nh3:c\tNULL\tthird line\n")
    assert produced.returncode == 0, produced.stderr
    consumed = run_tool(group_cluster, "console-consumer", "--topic", topic_name, "--from-beginning",
                        "--max-messages", "3", "--property", "print.timestamp=true", "--property",
                        "print.partition=true", "--property", "print.offset=true", "--property", "print.headers=true",
                        "--property", "print.key=true")
    assert consumed.returncode == 0, consumed.stderr
    rows = [FORMATTED.match(line).groups() for line in consumed.stdout.splitlines()]
    assert rows == [("0", "h1:a,h2:b", "k1", "first"), ("1", "NO_HEADERS", "k2", "null"),
                    ("2", "h3:c", "null", "third line")]
    assert consumed.stderr.strip().endswith("Processed a total of 3 messages")

    from_offset = run_tool(group_cluster, "console-consumer", "--topic", topic_name, "--partition", "0", "--offset",
                           "2", "--timeout-ms", "1500")
    assert (from_offset.stdout, from_offset.returncode) == ("third line\n", 0)


def test_a_line_without_its_key_separator_stops_the_producer(group_cluster, topic_name):
    bad = run_tool(group_cluster, "console-producer", "--topic", topic_name, "--property", "parse.key=true",
                   stdin="no separator here\n")
    assert bad.returncode == 1
    assert bad.stderr.strip() == ("org.apache.kafka.common.KafkaException: No key separator found on line number 1: "
                                  "'no separator here'")
    usage = run_tool(group_cluster, "console-consumer", "--topic", topic_name, "--offset", "3")
    assert usage.returncode == 1 and usage.stderr.startswith("The partition is required when offset is specified.")


def test_read_committed_skips_an_aborted_transaction(group_cluster, topic_name):
    run_tool(group_cluster, "topics", "--create", "--topic", topic_name)
    producer = Producer({"bootstrap.servers": group_cluster.bootstrap, "transactional.id": topic_name})
    producer.init_transactions()
    for value, commit in ((b"kept", True), (b"aborted", False), (b"kept too", True)):
        producer.begin_transaction()
        producer.produce(topic_name, value=value, partition=0)
        producer.flush()          # in the log before the abort (librdkafka drops what it has not sent)
        (producer.commit_transaction if commit else producer.abort_transaction)()
    committed = run_tool(group_cluster, "console-consumer", "--topic", topic_name, "--from-beginning",
                         "--isolation-level", "read_committed", "--timeout-ms", "2000")
    assert committed.stdout.splitlines() == ["kept", "kept too"]
    everything = run_tool(group_cluster, "console-consumer", "--topic", topic_name, "--from-beginning",
                          "--timeout-ms", "2000")
    assert everything.stdout.splitlines() == ["kept", "aborted", "kept too"]
