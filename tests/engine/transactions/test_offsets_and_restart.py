"""Transactional offsets (TxnOffsetCommit) stay pending until the COMMIT marker reaches
`__consumer_offsets` (require_stable answers UNSTABLE_OFFSET_COMMIT meanwhile), an abort drops
them, and the coordinators' state - open transactions, completed ones, pending offsets -
survives kill -9 and a restart."""
from __future__ import annotations

import kafka.errors as Errors
import pytest

from tests.support.groups import GroupClient, create_topic
from tests.support.transactions import (TXN_TEST_CONFIGS, add_offsets, add_partitions, coordinator_client, describe,
                                        end_txn, group_client, init_producer_id, offset_fetch, txn_offset_commit)
from tests.support.waiting import wait_until

UNSTABLE = Errors.UnstableOffsetCommitError.errno


def _open_transaction_with_offsets(engine, tid: str, group: str, offset: int):
    txn = coordinator_client(engine, tid)
    pid = init_producer_id(txn, tid)
    assert add_partitions(txn, tid, pid.producer_id, pid.producer_epoch, [("in", 0)]) == {("in", 0): 0}
    assert add_offsets(txn, tid, pid.producer_id, pid.producer_epoch, group) == 0
    groups = group_client(engine, group)
    assert txn_offset_commit(groups, tid, pid.producer_id, pid.producer_epoch, group, {("in", 0): offset}) \
        == {("in", 0): 0}
    groups.close()
    return txn, pid


def _fetch(engine, group: str, *, require_stable: bool, version: int = 7):
    client = group_client(engine, group)
    try:
        return offset_fetch(client, group, [("in", 0)], require_stable=require_stable, version=version)[("in", 0)]
    finally:
        client.close()


@pytest.fixture(scope="module", autouse=True)
def input_topic(txn_cluster):
    create_topic(txn_cluster.bootstrap, "in", 1, replication=3)


def test_offsets_are_visible_only_after_commit_and_dropped_on_abort(txn_cluster):
    txn, pid = _open_transaction_with_offsets(txn_cluster, "offsets-commit", "og", 42)
    assert _fetch(txn_cluster, "og", require_stable=False) == (-1, 0)        # not visible yet
    assert _fetch(txn_cluster, "og", require_stable=True) == (-1, UNSTABLE)
    assert _fetch(txn_cluster, "og", require_stable=True, version=8) == (-1, UNSTABLE)
    assert end_txn(txn, "offsets-commit", pid.producer_id, pid.producer_epoch, True) == 0
    assert wait_until(lambda: _fetch(txn_cluster, "og", require_stable=True) == (42, 0), message="the commit")

    txn2, pid2 = _open_transaction_with_offsets(txn_cluster, "offsets-abort", "og", 99)
    assert end_txn(txn2, "offsets-abort", pid2.producer_id, pid2.producer_epoch, False) == 0
    wait_until(lambda: describe(txn2, "offsets-abort").transaction_state == "CompleteAbort", message="the abort")
    assert _fetch(txn_cluster, "og", require_stable=True) == (42, 0)          # the aborted 99 never shows
    txn.close()
    txn2.close()


def test_offsets_outside_the_transaction_are_refused(txn_cluster):
    txn = coordinator_client(txn_cluster, "no-add-offsets")
    pid = init_producer_id(txn, "no-add-offsets")
    add_partitions(txn, "no-add-offsets", pid.producer_id, pid.producer_epoch, [("in", 0)])
    groups = group_client(txn_cluster, "skipped-add-offsets")
    assert txn_offset_commit(groups, "no-add-offsets", pid.producer_id, pid.producer_epoch, "skipped-add-offsets",
                             {("in", 0): 5}) == {("in", 0): Errors.InvalidTxnStateError.errno}   # KIP-890
    assert _fetch(txn_cluster, "skipped-add-offsets", require_stable=True) == (-1, 0)
    groups.close()
    txn.close()


def test_coordinator_state_survives_kill_9(engine_factory, tmp_path):
    configs = {**TXN_TEST_CONFIGS, "transaction.state.log.num.partitions": "3"}
    engine = engine_factory(brokers=1, configs=configs, data_dir=tmp_path / "data")
    create_topic(engine.bootstrap, "in", 1)
    done = coordinator_client(engine, "done-id")
    finished = init_producer_id(done, "done-id")
    add_partitions(done, "done-id", finished.producer_id, finished.producer_epoch, [("in", 0)])
    assert end_txn(done, "done-id", finished.producer_id, finished.producer_epoch, True) == 0
    wait_until(lambda: describe(done, "done-id").transaction_state == "CompleteCommit", message="CompleteCommit")
    done.close()
    txn, pid = _open_transaction_with_offsets(engine, "open-id", "rg", 7)
    txn.close()

    engine.kill()
    engine.start()
    txn = coordinator_client(engine, "open-id")
    reloaded = describe(txn, "open-id")
    assert (reloaded.transaction_state, reloaded.producer_id, reloaded.producer_epoch) == \
        ("Ongoing", pid.producer_id, pid.producer_epoch)
    assert sorted((t.topic, p) for t in reloaded.topics for p in t.partitions)[-1] == ("in", 0)
    assert describe(txn, "done-id").transaction_state == "CompleteCommit"
    assert _fetch(engine, "rg", require_stable=True) == (-1, UNSTABLE)       # pending, read back from the log
    assert end_txn(txn, "open-id", pid.producer_id, pid.producer_epoch, True) == 0
    assert wait_until(lambda: _fetch(engine, "rg", require_stable=True) == (7, 0), message="the commit")
    again = init_producer_id(txn, "done-id")
    assert (again.producer_id, again.producer_epoch) == (finished.producer_id, finished.producer_epoch + 1)
    txn.close()


def test_idle_transactional_ids_expire(engine_factory):
    engine = engine_factory(brokers=1, configs={**TXN_TEST_CONFIGS, "transaction.state.log.num.partitions": "1",
                                                "transactional.id.expiration.ms": "1000",
                                                "transaction.remove.expired.transaction.cleanup.interval.ms": "200"})
    client = coordinator_client(engine, "short-lived")
    init_producer_id(client, "short-lived")
    assert describe(client, "short-lived").error_code == 0
    wait_until(lambda: describe(client, "short-lived").error_code == Errors.TransactionalIdNotFoundError.errno,
               message="the id to expire")
    client.close()


def test_a_plain_commit_written_after_the_transactional_one_survives_its_commit_marker(engine_factory, tmp_path):
    """Kafka applies a transaction's offsets at its COMMIT marker only where they are newer in
    the log than the group's committed offset (OffsetMetadataManager.replayEndTransactionMarker),
    which is also what compaction keeps: a producer's transaction must not take back a commit
    another client made, and was answered, after the producer's TxnOffsetCommit."""
    configs = {**TXN_TEST_CONFIGS, "transaction.state.log.num.partitions": "1"}
    engine = engine_factory(brokers=1, configs=configs, data_dir=tmp_path / "data")
    create_topic(engine.bootstrap, "in", 2)
    txn, pid = _open_transaction_with_offsets(engine, "older-offsets", "kept", 3)
    groups = group_client(engine, "kept")
    assert txn_offset_commit(groups, "older-offsets", pid.producer_id, pid.producer_epoch, "kept",
                             {("in", 1): 4}) == {("in", 1): 0}
    consumer = GroupClient(engine, "kept")
    assert consumer.commit({("in", 0): 50}) == {("in", 0): 0}        # acknowledged, after the pending 3
    consumer.close()
    assert end_txn(txn, "older-offsets", pid.producer_id, pid.producer_epoch, True) == 0
    wait_until(lambda: describe(txn, "older-offsets").transaction_state == "CompleteCommit", message="the commit")
    txn.close()

    def committed():
        client = group_client(engine, "kept")
        try:
            return offset_fetch(client, "kept", [("in", 0), ("in", 1)], require_stable=True)
        finally:
            client.close()
    assert committed() == {("in", 0): (50, 0), ("in", 1): (4, 0)}   # the partition only it committed is its
    engine.kill()
    engine.start()
    assert wait_until(lambda: (lambda c: c if c[("in", 0)][1] == 0 else None)(committed()),
                      message="the group loaded") == {("in", 0): (50, 0), ("in", 1): (4, 0)}
