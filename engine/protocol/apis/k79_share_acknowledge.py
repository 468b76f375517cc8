"""ShareAcknowledge: v1-2 (KIP-932; v2: KIP-1222's Renew, IsRenewAck and AcquisitionLockTimeoutMs).

Acknowledges records a share group member holds, without fetching: per partition, ranges of
offsets with one type for the range or one per offset - 0 GAP (not a record), 1 ACCEPT, 2
RELEASE (deliver again, unless the delivery limit is reached: then archived), 3 REJECT
(archive), 4 RENEW (extend the lock). A partition's acknowledgements apply all or none, and
are durable (written to the share coordinator) before the answer. The request continues the
member's share session (its epoch advances; -1 also closes it, releasing what the member
still holds); epoch 0 cannot open one (INVALID_SHARE_SESSION_EPOCH).
Errors: INVALID_REQUEST, SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH at the top; per
partition INVALID_RECORD_STATE (a record the member does not hold), UNKNOWN_TOPIC_ID,
NOT_LEADER_OR_FOLLOWER, and the share coordinator's errors when the state cannot be written.
Authorization (as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED at the top;
READ on each topic, else TOPIC_AUTHORIZATION_FAILED on its partitions (not acknowledged).
"""
import kafka.errors as Errors

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.share_responses import leader_of, node_endpoints, readable_topics
from engine.protocol.specs import ShareAcknowledgeRequest, ShareAcknowledgeResponse
from engine.security import authorize
from kafka_rules.acls import READ

R = ShareAcknowledgeResponse
Topic = R.ShareAcknowledgeTopicResponse
Partition = Topic.PartitionData


@api(ShareAcknowledgeRequest, ShareAcknowledgeResponse, versions=(1, 2))
async def handle_share_acknowledge(ctx, request: ShareAcknowledgeRequest) -> R:
    manager = ctx.broker.share_manager
    group_id = request.group_id or ""
    partitions = {(t.topic_id, p.partition_index): [(b.first_offset, b.last_offset, list(b.acknowledge_types))
                                                    for b in p.acknowledgement_batches]
                  for t in request.topics for p in t.partitions}
    lock_ms = manager.lock_duration_ms(group_id) if group_id else 0
    try:
        authorize.require_group(ctx, READ, group_id)
        results = await manager.acknowledge(group_id, request.member_id or "", request.share_session_epoch,
                                            partitions, readable_topics(ctx))
    except ApiError as exc:
        return R(throttle_time_ms=0, error_code=exc.code, error_message=exc.message,
                 acquisition_lock_timeout_ms=lock_ms, responses=[], node_endpoints=[])
    image = ctx.broker.image
    by_topic: dict = {}
    moved = set()
    for (topic_id, index), result in results.items():
        leader_id, leader_epoch = leader_of(image, topic_id, index)
        if result.ack_error == Errors.NotLeaderForPartitionError.errno and leader_id >= 0:
            moved.add(leader_id)
        by_topic.setdefault(topic_id, []).append(Partition(
            partition_index=index, error_code=result.ack_error, error_message=result.ack_message,
            current_leader=Partition.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch)))
    return R(throttle_time_ms=0, error_code=0, error_message=None, acquisition_lock_timeout_ms=lock_ms,
             responses=[Topic(topic_id=topic_id, partitions=ps) for topic_id, ps in by_topic.items()],
             node_endpoints=node_endpoints(image, moved, R.NodeEndpoint))
