"""WriteTxnMarkers: v0-2.

Sent by a transaction coordinator (ours, or an admin tool aborting a hanging
transaction, as `kafka-transactions.sh abort` does) to the leaders of a transaction's
partitions. For each marker, a COMMIT (transaction_result true) or ABORT control batch of
the producer is appended to every named partition this broker leads, through the normal
replicated path, and the answer waits until it is replicated, as acks=all
(engine/broker/txn_markers.py). Markers of one request are written concurrently.

- Per-partition errors: NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
  INVALID_PRODUCER_EPOCH (an epoch older than the partition's), TRANSACTION_COORDINATOR_FENCED
  (a coordinator epoch older than the partition's), NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
  REQUEST_TIMED_OUT (not replicated within MARKER_TIMEOUT_MS, Kafka's request.timeout.ms
  default), KAFKA_STORAGE_ERROR.
- A marker for a producer with no open transaction in a partition is written anyway (as
  Kafka): it changes nothing there but the producer's coordinator epoch.
- After replication the broker's txn marker listeners run (the group coordinator's
  pending transactional offsets).
Authorization (as KafkaApis): ALTER or CLUSTER_ACTION on the cluster, else every partition is
CLUSTER_AUTHORIZATION_FAILED.
Gaps: v2's transaction_version is read and ignored
(transactions v2, KIP-890 part 2, is not built).
"""
import asyncio

import kafka.errors as Errors
from kafka.protocol.producer import WriteTxnMarkersRequest, WriteTxnMarkersResponse

from engine.broker.txn_markers import write_txn_markers
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER, CLUSTER_ACTION

MarkerResult = WriteTxnMarkersResponse.WritableTxnMarkerResult
TopicResult = MarkerResult.WritableTxnMarkerTopicResult
PartitionResult = TopicResult.WritableTxnMarkerPartitionResult
MARKER_TIMEOUT_MS = 30_000


@api(WriteTxnMarkersRequest, WriteTxnMarkersResponse, versions=(0, 2))
async def handle_write_txn_markers(ctx, request: WriteTxnMarkersRequest) -> WriteTxnMarkersResponse:
    if not (authorize.authorize_cluster(ctx, ALTER) or authorize.authorize_cluster(ctx, CLUSTER_ACTION)):
        return WriteTxnMarkersResponse(markers=[_refused(marker) for marker in request.markers])
    results = await asyncio.gather(*(_write(ctx.broker, marker) for marker in request.markers))
    return WriteTxnMarkersResponse(markers=list(results))


def _refused(marker) -> MarkerResult:
    error = Errors.ClusterAuthorizationFailedError.errno
    return MarkerResult(producer_id=marker.producer_id, topics=[
        TopicResult(name=t.name, partitions=[PartitionResult(partition_index=p, error_code=error)
                                             for p in t.partition_indexes]) for t in marker.topics])


async def _write(broker, marker) -> MarkerResult:
    partitions = [(t.name, p) for t in marker.topics for p in t.partition_indexes]
    errors = await write_txn_markers(
        broker, producer_id=marker.producer_id, producer_epoch=marker.producer_epoch,
        coordinator_epoch=marker.coordinator_epoch, commit=marker.transaction_result,
        partitions=partitions, timeout_ms=MARKER_TIMEOUT_MS)
    return MarkerResult(producer_id=marker.producer_id, topics=[
        TopicResult(name=t.name, partitions=[PartitionResult(partition_index=p, error_code=errors[(t.name, p)])
                                             for p in t.partition_indexes])
        for t in marker.topics])
