"""`python -m engine topics` against the engine, its output in kafka-topics.sh's shape."""
from __future__ import annotations

import re

from tests.engine.tools.conftest import run_tool

TOPIC_LINE = re.compile(r"^Topic: (\S+)\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: (\d+)\tReplicationFactor: (\d+)"
                        r"\tConfigs: (.*)$")
PARTITION_LINE = re.compile(r"^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (\d+|none)\tReplicas: ([\d,]+)\tIsr: ([\d,]*)"
                            r"\tElr: N/A\tLastKnownElr: N/A$")


def test_create_list_describe_alter_and_delete(group_cluster, topic_name):
    created = run_tool(group_cluster, "topics", "--create", "--topic", topic_name, "--partitions", "2",
                       "--replication-factor", "2", "--config", "retention.ms=3600000", "--config",
                       "min.insync.replicas=2")
    assert (created.returncode, created.stdout) == (0, f"Created topic {topic_name}.\n"), created.stderr
    listed = run_tool(group_cluster, "topics", "--list")
    assert topic_name in listed.stdout.splitlines()

    described = run_tool(group_cluster, "topics", "--describe", "--topic", topic_name).stdout.splitlines()
    header = TOPIC_LINE.match(described[0])
    assert header and header.groups()[:3] == (topic_name, "2", "2")
    assert set(header.group(4).split(",")) == {"retention.ms=3600000", "min.insync.replicas=2"}
    partitions = [PARTITION_LINE.match(line) for line in described[1:]]
    assert [m.group(2) for m in partitions] == ["0", "1"]
    assert all(m.group(3) == m.group(4).split(",")[0] and len(m.group(5).split(",")) == 2 for m in partitions)

    assert run_tool(group_cluster, "topics", "--describe", "--topic", topic_name,
                    "--under-replicated-partitions").stdout == ""
    at_min = run_tool(group_cluster, "topics", "--describe", "--topic", topic_name, "--at-min-isr-partitions")
    assert [PARTITION_LINE.match(line).group(2) for line in at_min.stdout.splitlines()] == ["0", "1"]
    overrides = run_tool(group_cluster, "topics", "--describe", "--topics-with-overrides").stdout.splitlines()
    assert any(TOPIC_LINE.match(line) and TOPIC_LINE.match(line).group(1) == topic_name for line in overrides)
    assert not any(line.startswith("\t") for line in overrides)

    assert run_tool(group_cluster, "topics", "--alter", "--topic", topic_name, "--partitions", "3").returncode == 0
    described = run_tool(group_cluster, "topics", "--describe", "--topic", topic_name).stdout.splitlines()
    assert TOPIC_LINE.match(described[0]).group(2) == "3" and len(described) == 4

    assert run_tool(group_cluster, "topics", "--delete", "--topic", topic_name).returncode == 0
    assert topic_name not in run_tool(group_cluster, "topics", "--list").stdout.splitlines()


def test_errors_are_kafkas_sentences_and_exit_1(group_cluster, topic_name):
    assert run_tool(group_cluster, "topics", "--create", "--topic", topic_name).returncode == 0
    again = run_tool(group_cluster, "topics", "--create", "--topic", topic_name)
    assert (again.returncode, again.stdout) == (1, f"Error while executing topic command : Topic '{topic_name}' "
                                                   "already exists.\n")
    assert run_tool(group_cluster, "topics", "--create", "--topic", topic_name, "--if-not-exists").returncode == 0
    missing = run_tool(group_cluster, "topics", "--delete", "--topic", "no-such-topic")
    assert (missing.returncode, missing.stdout) == (1, "Error while executing topic command : Topic 'no-such-topic' "
                                                       "does not exist as expected\n")
    too_many = run_tool(group_cluster, "topics", "--create", "--topic", topic_name + "-rf", "--replication-factor", "9")
    assert too_many.returncode == 1
    assert too_many.stdout.startswith("Error while executing topic command : ") and "Traceback" not in too_many.stderr
    shrink = run_tool(group_cluster, "topics", "--alter", "--topic", topic_name, "--partitions", "1")
    assert shrink.returncode == 1 and shrink.stdout.startswith("Error while executing topic command : Topic already "
                                                               "has 1 partition")
    usage = run_tool(group_cluster, "topics", "--list", "--create")
    assert usage.returncode == 1
    assert usage.stderr.startswith("Command must include exactly one action: --list, --describe, --create, --alter "
                                   "or --delete\nusage:")
    unreachable = run_tool(group_cluster, "topics", "--list", bootstrap="")
    assert unreachable.returncode == 1 and "--bootstrap-server must be specified" in unreachable.stderr
