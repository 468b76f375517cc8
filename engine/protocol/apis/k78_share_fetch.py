"""ShareFetch: v1-2 (KIP-932; v2: KIP-1206's ShareAcquireMode and KIP-1222's Renew).

A share group member fetches records it may process: the broker acquires them for it
(engine/share/manager.py, partition.py) and answers, per partition, the record batches as on
disk and the acquired ranges with their delivery counts, locked for AcquisitionLockTimeoutMs
(the group's `share.record.lock.duration.ms`). Acknowledgements of earlier deliveries ride
along (per partition, AcknowledgeErrorCode). Share sessions: epoch 0 opens one, the next
epochs continue it with the changed partitions only, -1 closes it (its member's acquired
records are released), and so does the close of the connection it was opened on. MaxRecords bounds the records acquired (whole batches in the default
batch-optimized mode; exactly, with ShareAcquireMode 1 record_limit; 255 - 0xFF, -1 as the
signed int8 it is - only renews locks and acquires nothing); MaxBytes the bytes; MaxWaitMs is
the long poll when nothing is acquired.
Errors: INVALID_REQUEST (empty group or member id, acknowledgements at epoch 0),
SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED at the
top; per partition UNKNOWN_TOPIC_ID, NOT_LEADER_OR_FOLLOWER (with the leader's endpoint in
NodeEndpoints), UNKNOWN_TOPIC_OR_PARTITION, KAFKA_STORAGE_ERROR, and for acknowledgements
INVALID_RECORD_STATE.
Authorization (as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED at the top;
READ on each topic of the session, else TOPIC_AUTHORIZATION_FAILED on its partitions (nothing
acquired or acknowledged there; the partition stays in the session and is served once an ACL
allows it).
Gaps: records are read and copied into the answer (no sendfile, unlike Fetch); no client
quotas on share fetches.
"""
import kafka.errors as Errors

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.share_responses import leader_of, node_endpoints, readable_topics
from engine.protocol.specs import ShareFetchRequest, ShareFetchResponse
from engine.security import authorize
from kafka_rules.acls import READ
from engine.share.manager import FetchRequest

R = ShareFetchResponse
Topic = R.ShareFetchableTopicResponse
Partition = Topic.PartitionData


@api(ShareFetchRequest, ShareFetchResponse, versions=(1, 2))
async def handle_share_fetch(ctx, request: ShareFetchRequest) -> R:
    manager = ctx.broker.share_manager
    group_id = request.group_id or ""
    partitions = {}
    for topic in request.topics:
        for p in topic.partitions:
            partitions[(topic.topic_id, p.partition_index)] = [
                (b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in p.acknowledgement_batches]
    forgotten = {(t.topic_id, p) for t in request.forgotten_topics_data for p in t.partitions}
    try:
        authorize.require_group(ctx, READ, group_id)
        results = await manager.fetch(FetchRequest(
            group_id=group_id, member_id=request.member_id or "", epoch=request.share_session_epoch,
            max_wait_ms=request.max_wait_ms, min_bytes=request.min_bytes, max_bytes=max(request.max_bytes, 0),
            max_records=request.max_records, acquire_mode=request.share_acquire_mode if ctx.api_version >= 2 else 0,
            partitions=partitions, forgotten=forgotten, on_close=ctx.on_close,
            readable=readable_topics(ctx)))
    except ApiError as exc:
        return R(throttle_time_ms=0, error_code=exc.code, error_message=exc.message,
                 acquisition_lock_timeout_ms=0, responses=[], node_endpoints=[])
    image = ctx.broker.image
    by_topic: dict = {}
    moved = set()
    for (topic_id, index), result in results.items():
        leader_id, leader_epoch = leader_of(image, topic_id, index)
        if result.error == Errors.NotLeaderForPartitionError.errno and leader_id >= 0:
            moved.add(leader_id)
        by_topic.setdefault(topic_id, []).append(Partition(
            partition_index=index, error_code=result.error, error_message=result.error_message,
            acknowledge_error_code=result.ack_error, acknowledge_error_message=result.ack_message,
            current_leader=Partition.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch),
            records=b"".join(result.records),
            acquired_records=[Partition.AcquiredRecords(first_offset=r.first_offset, last_offset=r.last_offset,
                                                        delivery_count=r.delivery_count) for r in result.ranges]))
    return R(throttle_time_ms=0, error_code=0, error_message=None,
             acquisition_lock_timeout_ms=manager.lock_duration_ms(group_id) if group_id else 0,
             responses=[Topic(topic_id=topic_id, partitions=sorted(ps, key=lambda p: p.partition_index))
                        for topic_id, ps in by_topic.items()],
             node_endpoints=node_endpoints(image, moved, R.NodeEndpoint))
