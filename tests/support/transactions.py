"""Helpers for transaction tests: engine configs and raw transaction requests."""
from __future__ import annotations

from kafka.protocol.admin.transactions import (DescribeTransactionsRequest, DescribeTransactionsResponse,
                                               ListTransactionsRequest, ListTransactionsResponse)
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse
from kafka.protocol.producer.transaction import (AddPartitionsToTxnRequest, AddPartitionsToTxnResponse,
                                                 EndTxnRequest, EndTxnResponse)

from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

TXN_TEST_CONFIGS = {
    "group.initial.rebalance.delay.ms": "100",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "10",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
}
V3 = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic
RETRIABLE = {51, 14, 15, 16}   # CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR


def coordinator_client(engine, transactional_id: str) -> RawClient:
    """A raw connection to the transaction coordinator of `transactional_id`."""
    client = RawClient(engine.ports[0])

    def find():
        response = client.request(FindCoordinatorRequest(key=transactional_id, key_type=1), 3,
                                  FindCoordinatorResponse)
        return response if response.error_code == 0 else None
    found = wait_until(find, message=f"the coordinator of {transactional_id}")
    client.close()
    return RawClient(found.port)


def init_producer_id(client: RawClient, transactional_id: str, *, timeout_ms: int = 60000, version: int = 4,
                     producer_id: int = -1, producer_epoch: int = -1, retry: bool = True):
    def attempt():
        response = client.request(InitProducerIdRequest(
            transactional_id=transactional_id, transaction_timeout_ms=timeout_ms, producer_id=producer_id,
            producer_epoch=producer_epoch), version, InitProducerIdResponse)
        return response if not (retry and response.error_code in RETRIABLE) else None
    return wait_until(attempt, message=f"InitProducerId of {transactional_id}")


def add_partitions(client: RawClient, transactional_id: str, producer_id: int, epoch: int,
                   partitions: list[tuple[str, int]], *, version: int = 3) -> dict[tuple[str, int], int]:
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    response = client.request(AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=transactional_id, v3_and_below_producer_id=producer_id,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[V3(name=t, partitions=p) for t, p in by_topic.items()]), version,
        AddPartitionsToTxnResponse)
    return {(t.name, p.partition_index): p.partition_error_code
            for t in response.results_by_topic_v3_and_below for p in t.results_by_partition}


def end_txn(client: RawClient, transactional_id: str, producer_id: int, epoch: int, commit: bool, *,
            version: int = 3) -> int:
    return client.request(EndTxnRequest(transactional_id=transactional_id, producer_id=producer_id,
                                        producer_epoch=epoch, committed=commit), version, EndTxnResponse).error_code


def describe(client: RawClient, transactional_id: str):
    response = client.request(DescribeTransactionsRequest(transactional_ids=[transactional_id]), 0,
                              DescribeTransactionsResponse)
    return response.transaction_states[0]


def wait_for_state(engine, transactional_id: str, state: str, timeout: float = 30.0):
    client = coordinator_client(engine, transactional_id)
    try:
        return wait_until(lambda: (lambda d: d if d.transaction_state == state else None)(
            describe(client, transactional_id)), timeout=timeout, message=f"{transactional_id} in {state}")
    finally:
        client.close()


def list_transactions(port: int, *, states=(), producer_ids=(), duration_ms: int = -1, pattern: str | None = None,
                      version: int = 2):
    client = RawClient(port)
    try:
        return client.request(ListTransactionsRequest(state_filters=list(states), producer_id_filters=list(producer_ids),
                                                      duration_filter=duration_ms, transactional_id_pattern=pattern),
                              version, ListTransactionsResponse)
    finally:
        client.close()


def add_offsets(client: RawClient, transactional_id: str, producer_id: int, epoch: int, group: str) -> int:
    from kafka.protocol.producer.transaction import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
    return client.request(AddOffsetsToTxnRequest(transactional_id=transactional_id, producer_id=producer_id,
                                                 producer_epoch=epoch, group_id=group), 3,
                          AddOffsetsToTxnResponse).error_code


def group_client(engine, group: str) -> RawClient:
    client = RawClient(engine.ports[0])
    found = wait_until(lambda: (lambda r: r if r.error_code == 0 else None)(client.request(
        FindCoordinatorRequest(key=group, key_type=0), 3, FindCoordinatorResponse)), message=f"coordinator of {group}")
    client.close()
    return RawClient(found.port)


def txn_offset_commit(client: RawClient, transactional_id: str, producer_id: int, epoch: int, group: str,
                      offsets: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    from kafka.protocol.producer.transaction import TxnOffsetCommitRequest, TxnOffsetCommitResponse
    T = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    by_topic: dict[str, list] = {}
    for (topic, index), offset in offsets.items():
        by_topic.setdefault(topic, []).append(T.TxnOffsetCommitRequestPartition(
            partition_index=index, committed_offset=offset, committed_leader_epoch=-1, committed_metadata=""))
    response = client.request(TxnOffsetCommitRequest(
        transactional_id=transactional_id, group_id=group, producer_id=producer_id, producer_epoch=epoch,
        generation_id=-1, member_id="", group_instance_id=None,
        topics=[T(name=t, partitions=p) for t, p in by_topic.items()]), 3, TxnOffsetCommitResponse)
    return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


def offset_fetch(client: RawClient, group: str, partitions: list[tuple[str, int]], *, require_stable: bool,
                 version: int = 7) -> dict[tuple[str, int], tuple[int, int]]:
    """(committed offset, error code) per partition."""
    from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    if version >= 8:
        G = OffsetFetchRequest.OffsetFetchRequestGroup
        request = OffsetFetchRequest(require_stable=require_stable, groups=[G(group_id=group, topics=[
            G.OffsetFetchRequestTopics(name=t, partition_indexes=p) for t, p in by_topic.items()])])
        response = client.request(request, version, OffsetFetchResponse)
        topics = response.groups[0].topics
    else:
        T = OffsetFetchRequest.OffsetFetchRequestTopic
        request = OffsetFetchRequest(group_id=group, require_stable=require_stable,
                                     topics=[T(name=t, partition_indexes=p) for t, p in by_topic.items()])
        topics = client.request(request, version, OffsetFetchResponse).topics
    return {(t.name, p.partition_index): (p.committed_offset, p.error_code) for t in topics for p in t.partitions}
