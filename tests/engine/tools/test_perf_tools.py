"""`python -m engine producer-perf-test` and `consumer-perf-test`: Kafka's options and
result lines (the issue's quoted command, with a bootstrap server)."""
from __future__ import annotations

import re

from tests.engine.tools.conftest import run_tool

TOTAL = re.compile(r"^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, [\d.]+ ms max "
                   r"latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$")
HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, "
          "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
ROW = re.compile(rf"^{DATE}, {DATE}, ([\d.]+), [\d.]+, (\d+), "
                 r"[\d.]+, \d+, \d+, [\d.]+, [\d.]+$")


def test_producer_then_consumer_perf_test(group_cluster, topic_name):
    run_tool(group_cluster, "topics", "--create", "--topic", topic_name, "--partitions", "3")
    produced = run_tool(group_cluster, "producer-perf-test", "--topic", topic_name, "--num-records", "10000",
                        "--record-size", "1024", "--throughput", "10000", "--producer-props",
                        f"bootstrap.servers={group_cluster.bootstrap}", "acks=all", bootstrap="")
    assert produced.returncode == 0, produced.stderr
    total = TOTAL.match(produced.stdout.splitlines()[-1])
    assert total and total.group(1) == "10000", produced.stdout
    consumed = run_tool(group_cluster, "consumer-perf-test", "--topic", topic_name, "--messages", "10000",
                        "--timeout", "30000")
    assert consumed.returncode == 0, consumed.stderr
    header, row = consumed.stdout.splitlines()
    assert header == HEADER
    match = ROW.match(row)
    assert match and match.group(2) == "10000" and float(match.group(1)) == round(10000 * 1024 / 2**20, 4)


def test_perf_test_usage_errors_exit_1(group_cluster):
    both = run_tool(group_cluster, "producer-perf-test", "--topic", "x", "--num-records", "1", "--throughput", "-1",
                    "--record-size", "1", "--payload-monotonic", bootstrap="")
    assert both.returncode == 1 and both.stderr.startswith("Either --record-size or --payload-file or "
                                                           "--payload-monotonic must be specified")
