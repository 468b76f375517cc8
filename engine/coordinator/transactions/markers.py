"""Writing a transaction's COMMIT or ABORT markers to every partition it touched (Kafka's
TransactionMarkerChannelManager, one round at a time).

Partitions are grouped by their current leader. Those this broker leads are written in
process (`engine/broker/txn_markers.write_txn_markers`, owned by the log side); the others
get a WriteTxnMarkers request. `send_markers` makes one attempt and returns an error code per
partition; the coordinator retries the failed ones (leaders move, brokers restart) until
every marker is written or the partition no longer exists.
"""
from __future__ import annotations

import asyncio
import logging

import kafka.errors as Errors
from kafka.protocol.producer.transaction import WriteTxnMarkersRequest, WriteTxnMarkersResponse

from engine.errors import ApiError

log = logging.getLogger(__name__)
TopicPartition = tuple[str, int]
MARKERS_VERSION = 1
# Errors after which a partition needs no marker: it is gone, or it saw a newer epoch of the producer.
FINAL_ERRORS = {0, Errors.UnknownTopicOrPartitionError.errno, Errors.InvalidProducerEpochError.errno}
MARKER = WriteTxnMarkersRequest.WritableTxnMarker


def _write_locally():
    """The log side's marker writer (the seam to engine/broker/txn_markers.py)."""
    from engine.broker.txn_markers import write_txn_markers
    return write_txn_markers


async def send_markers(broker, channel, *, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                       commit: bool, partitions: set[TopicPartition], timeout_ms: int) -> dict[TopicPartition, int]:
    results: dict[TopicPartition, int] = {}
    by_leader: dict[int, list[TopicPartition]] = {}
    for tp in sorted(partitions):
        state = broker.image.partition(*tp)
        if state is None:
            results[tp] = Errors.UnknownTopicOrPartitionError.errno
        elif state.leader < 0 or state.leader not in broker.controller.live_brokers():
            results[tp] = Errors.LeaderNotAvailableError.errno
        else:
            by_leader.setdefault(state.leader, []).append(tp)
    marker = dict(producer_id=producer_id, producer_epoch=producer_epoch, coordinator_epoch=coordinator_epoch,
                  commit=commit, timeout_ms=timeout_ms)
    answers = await asyncio.gather(*(_send_to(broker, channel, leader, tps, **marker)
                                     for leader, tps in by_leader.items()))
    for answer in answers:
        results.update(answer)
    return results


async def _send_to(broker, channel, leader: int, partitions: list[TopicPartition], *, producer_id: int,
                   producer_epoch: int, coordinator_epoch: int, commit: bool, timeout_ms: int
                   ) -> dict[TopicPartition, int]:
    try:
        if leader == broker.node_id:
            return await _write_locally()(broker, producer_id=producer_id, producer_epoch=producer_epoch,
                                          coordinator_epoch=coordinator_epoch, commit=commit,
                                          partitions=partitions, timeout_ms=timeout_ms)
        by_topic: dict[str, list[int]] = {}
        for topic, index in partitions:
            by_topic.setdefault(topic, []).append(index)
        request = WriteTxnMarkersRequest(markers=[MARKER(
            producer_id=producer_id, producer_epoch=producer_epoch, transaction_result=commit,
            coordinator_epoch=coordinator_epoch,
            topics=[MARKER.WritableTxnMarkerTopic(name=t, partition_indexes=i) for t, i in by_topic.items()])])
        response = await channel.request(leader, request, MARKERS_VERSION, WriteTxnMarkersResponse,
                                         timeout_s=timeout_ms / 1000 + 5)
        found = {(t.name, p.partition_index): p.error_code
                 for m in response.markers for t in m.topics for p in t.partitions}
        return {tp: found.get(tp, Errors.UnknownError.errno) for tp in partitions}
    except ApiError as exc:
        return {tp: exc.code for tp in partitions}
    except Exception:  # noqa: BLE001 - a marker round must not kill the coordinator; it retries
        log.exception("Broker %d: writing markers for producer %d to broker %d failed", broker.node_id,
                      producer_id, leader)
        return {tp: Errors.UnknownError.errno for tp in partitions}
