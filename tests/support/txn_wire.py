"""Transactional batches and markers over the wire, with kafka-python's protocol classes:
what a transaction coordinator (or `kafka-transactions.sh abort`) sends to partition leaders."""
from __future__ import annotations

import time

from kafka.protocol.admin import DescribeProducersRequest, DescribeProducersResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse, ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer import (InitProducerIdRequest, InitProducerIdResponse, ProduceRequest,
                                     ProduceResponse, WriteTxnMarkersRequest, WriteTxnMarkersResponse)
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.support.raw_client import RawClient


def new_producer_id(client: RawClient) -> tuple[int, int]:
    init = client.request(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4,
                          InitProducerIdResponse)
    assert init.error_code == 0, init
    return init.producer_id, init.producer_epoch


def txn_batch(producer_id: int, epoch: int, sequence: int, values: list[bytes], *, key: bytes | None = None) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
                                        producer_epoch=epoch, base_sequence=sequence, batch_size=1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=int(time.time() * 1000), key=key, value=value, headers=[])
    return bytes(builder.build())


def produce(client: RawClient, topic: str, records: bytes, *, partition: int = 0,
            transactional_id: str | None = "txn") -> tuple[int, int]:
    """(error_code, base_offset) of an acks=all produce."""
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=transactional_id, acks=-1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=partition, records=records)])])
    answer = client.request(request, 9, ProduceResponse).responses[0].partition_responses[0]
    return answer.error_code, answer.base_offset


def write_marker(client: RawClient, producer_id: int, epoch: int, *, commit: bool, partitions: dict[str, list[int]],
                 coordinator_epoch: int = 0, version: int = 1) -> dict[tuple[str, int], int]:
    M = WriteTxnMarkersRequest.WritableTxnMarker
    request = WriteTxnMarkersRequest(markers=[M(
        producer_id=producer_id, producer_epoch=epoch, transaction_result=commit, coordinator_epoch=coordinator_epoch,
        topics=[M.WritableTxnMarkerTopic(name=t, partition_indexes=ps) for t, ps in partitions.items()])])
    response = client.request(request, version, WriteTxnMarkersResponse)
    (marker,) = response.markers
    assert marker.producer_id == producer_id
    return {(t.name, p.partition_index): p.error_code for t in marker.topics for p in t.partitions}


def fetch(client: RawClient, topic: str, *, offset: int = 0, read_committed: bool, partition: int = 0):
    """The partition's FetchResponse data (v11)."""
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24,
                           isolation_level=1 if read_committed else 0, session_id=0, session_epoch=-1,
                           topics=[F(topic=topic, partitions=[F.FetchPartition(
                               partition=partition, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                               partition_max_bytes=1 << 24)])], forgotten_topics_data=[], rack_id="")
    return client.request(request, 11, FetchResponse).responses[0].partitions[0]


def latest_offset(client: RawClient, topic: str, *, read_committed: bool, partition: int = 0) -> int:
    T = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest(replica_id=-1, isolation_level=1 if read_committed else 0, topics=[
        T(name=topic, partitions=[T.ListOffsetsPartition(partition_index=partition, current_leader_epoch=-1,
                                                         timestamp=-1)])])
    answer = client.request(request, 7, ListOffsetsResponse).topics[0].partitions[0]
    assert answer.error_code == 0, answer
    return answer.offset


def describe_producers(client: RawClient, topic: str, partition: int = 0):
    T = DescribeProducersRequest.TopicRequest
    response = client.request(DescribeProducersRequest(topics=[T(name=topic, partition_indexes=[partition])]), 0,
                              DescribeProducersResponse)
    return response.topics[0].partitions[0]


def leader_port(client: RawClient, topic: str, partition: int = 0) -> int:
    response = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                              allow_auto_topic_creation=False), 12, MetadataResponse)
    leader = next(p.leader_id for p in response.topics[0].partitions if p.partition_index == partition)
    return {b.node_id: b.port for b in response.brokers}[leader]
