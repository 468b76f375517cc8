"""`python -m engine transactions`: list, describe, describe-producers, find-hanging and abort,
run as a real command against a real engine, with transactions made by confluent-kafka."""
from __future__ import annotations

import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.engine_process import ROOT
from tests.support.txn_clients import end_offsets, hanging_transaction, open_transaction

TOPIC = "cli-txn"


def transactions_cli(engine, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", "transactions", "--bootstrap", engine.bootstrap, *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def table(output: str) -> list[dict[str, str]]:
    lines = [line for line in output.splitlines() if line.strip()]
    header = lines[0].split()
    return [dict(zip(header, line.split())) for line in lines[1:]]


@pytest.fixture(scope="module")
def txn_engine(tmp_path_factory):
    from tests.support.engine_process import EngineProcess
    engine = EngineProcess(tmp_path_factory.mktemp("txn-cli") / "data", brokers=1,
                           configs={"transaction.state.log.num.partitions": "4"}).start()
    admin = AdminClient({"bootstrap.servers": engine.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(30)
    yield engine
    engine.kill()


def test_list_describe_and_describe_producers_show_an_open_transaction(txn_engine):
    producer = open_transaction(txn_engine.bootstrap, "cli-open", [(TOPIC, 1, b"a"), (TOPIC, 1, b"b")])
    try:
        listed = transactions_cli(txn_engine, "list")
        assert listed.returncode == 0, listed.stderr
        [row] = [r for r in table(listed.stdout) if r["TransactionalId"] == "cli-open"]
        assert row["TransactionState"] == "Ongoing" and row["Coordinator"] == "0"

        described = transactions_cli(txn_engine, "describe", "--transactional-id", "cli-open")
        assert described.returncode == 0, described.stderr
        [d] = table(described.stdout)
        assert (d["TransactionalId"], d["ProducerId"], d["TransactionState"], d["TransactionTimeoutMs"],
                d["TopicPartitions"]) == ("cli-open", row["ProducerId"], "Ongoing", "600000", f"{TOPIC}-1")
        assert int(d["TransactionDurationMs"]) >= 0 and int(d["CurrentTransactionStartTimeMs"]) > 0

        producers = transactions_cli(txn_engine, "describe-producers", "--topic", TOPIC, "--partition", "1")
        assert producers.returncode == 0, producers.stderr
        [p] = [r for r in table(producers.stdout) if r["ProducerId"] == row["ProducerId"]]
        start = int(p["CurrentTransactionStartOffset"])
        assert int(p["LastSequence"]) == 1

        # A transaction its coordinator knows is not hanging, however long ago it started.
        hanging = transactions_cli(txn_engine, "find-hanging", "--topic", TOPIC, "--max-transaction-timeout", "0")
        assert hanging.returncode == 0, hanging.stderr
        assert table(hanging.stdout) == []
        assert end_offsets(txn_engine.bootstrap, TOPIC, 1)[0] == start
    finally:
        producer.abort_transaction(60)
    assert table(transactions_cli(txn_engine, "describe", "--transactional-id", "cli-open").stdout)[0][
        "TransactionState"] in ("CompleteAbort", "PrepareAbort")


def test_find_hanging_and_abort_a_transaction_whose_coordinator_lost_it(txn_engine):
    hanging_transaction(txn_engine, "cli-lost", [(TOPIC, 0, b"x"), (TOPIC, 0, b"y"), (TOPIC, 0, b"z")])
    stable, high = end_offsets(txn_engine.bootstrap, TOPIC, 0)
    assert stable < high        # read_committed consumers are stuck behind it

    # Kafka's tool only looks at transactions older than --max-transaction-timeout (15 minutes).
    recent = transactions_cli(txn_engine, "find-hanging", "--topic", TOPIC)
    assert recent.returncode == 0 and table(recent.stdout) == []
    found = transactions_cli(txn_engine, "find-hanging", "--topic", TOPIC, "--max-transaction-timeout", "0")
    assert found.returncode == 0, found.stderr
    [row] = table(found.stdout)
    assert (row["Topic"], row["Partition"], row["StartOffset"]) == (TOPIC, "0", str(stable))
    by_broker = transactions_cli(txn_engine, "find-hanging", "--broker-id", "0", "--max-transaction-timeout", "0")
    assert [r["ProducerId"] for r in table(by_broker.stdout) if r["Topic"] == TOPIC] == [row["ProducerId"]]

    wrong = transactions_cli(txn_engine, "abort", "--topic", TOPIC, "--partition", "0", "--start-offset",
                             str(stable + 1))
    assert wrong.returncode == 1 and "Could not find any open transactions starting at offset" in wrong.stderr

    aborted = transactions_cli(txn_engine, "abort", "--topic", TOPIC, "--partition", "0", "--start-offset", str(stable))
    assert aborted.returncode == 0, aborted.stderr
    stable_after, high_after = end_offsets(txn_engine.bootstrap, TOPIC, 0)
    assert stable_after == high_after == high + 1      # the ABORT marker, and nothing open any more
    again = transactions_cli(txn_engine, "find-hanging", "--topic", TOPIC, "--max-transaction-timeout", "0")
    assert table(again.stdout) == []


def test_errors_read_like_kafkas_tool(txn_engine):
    scope = transactions_cli(txn_engine, "find-hanging")
    assert scope.returncode == 1 and "requires either --topic or --broker-id" in scope.stderr
    partition_only = transactions_cli(txn_engine, "find-hanging", "--broker-id", "0", "--partition", "0")
    assert partition_only.returncode == 1 and "--partition argument requires --topic" in partition_only.stderr
    unknown = transactions_cli(txn_engine, "describe", "--transactional-id", "no-such-id")
    assert unknown.returncode == 1 and "no-such-id" in unknown.stderr and "does not exist" in unknown.stderr
    neither = transactions_cli(txn_engine, "abort", "--topic", TOPIC, "--partition", "0")
    assert neither.returncode == 1 and "--start-offset" in neither.stderr


def test_groups_describe_counts_lag_from_the_last_stable_offset_on_request(txn_engine):
    from tests.support.groups import GroupClient
    from tests.support.txn_clients import committed_transaction
    committed_transaction(txn_engine.bootstrap, "cli-lag-a", [(TOPIC, 1, b"1"), (TOPIC, 1, b"2")])
    start = end_offsets(txn_engine.bootstrap, TOPIC, 1)[1]
    producer = open_transaction(txn_engine.bootstrap, "cli-lag-b", [(TOPIC, 1, b"3"), (TOPIC, 1, b"4")])
    try:
        client = GroupClient(txn_engine, "cli-lag-group")
        try:
            assert client.commit({(TOPIC, 1): start - 1}) == {(TOPIC, 1): 0}
        finally:
            client.close()
        base = [sys.executable, "-m", "engine", "groups", "--bootstrap", txn_engine.bootstrap,
                "--describe", "cli-lag-group"]
        rows = {}
        for isolation in ("read_uncommitted", "read_committed"):
            out = subprocess.run(base + ["--isolation", isolation], cwd=ROOT, capture_output=True, text=True,
                                 timeout=60)
            assert out.returncode == 0, out.stderr
            lines = [line for line in out.stdout.splitlines() if line.startswith(("GROUP ", "cli-lag-group "))]
            rows[isolation] = dict(zip(lines[0].split(), lines[1].split()))
        assert (rows["read_uncommitted"]["LOG-END-OFFSET"], rows["read_uncommitted"]["LAG"]) == (str(start + 2), "3")
        assert (rows["read_committed"]["LOG-END-OFFSET"], rows["read_committed"]["LAG"]) == (str(start), "1")
    finally:
        producer.abort_transaction(60)
