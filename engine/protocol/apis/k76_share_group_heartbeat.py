"""ShareGroupHeartbeat: v1 (KIP-932).

Share group membership: a member joins with epoch 0 and its subscribed topic names (under a
member id it generated, or an empty one: then the coordinator makes one), heartbeats with its
current epoch, and leaves with -1. The coordinator assigns on the server side with the
simple assignor (several members may share a partition) and answers the member's partitions
when it joins or when they change (engine/coordinator/share_protocol.py).
- The interval sent back is the group's `share.heartbeat.interval.ms` (else
  `group.share.heartbeat.interval.ms`, 5 s); `share.session.timeout.ms` (45 s) without a
  heartbeat removes the member; `group.share.max.size` (200) members at most.
- Errors as Kafka's: INVALID_REQUEST (with Kafka's messages), UNKNOWN_MEMBER_ID,
  FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED, GROUP_ID_NOT_FOUND for a group of another
  type, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE.
- The group's changes are written to `__consumer_offsets` as Kafka's ShareGroup* records and
  the answer waits until they are replicated.
- Authorization (as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED; DESCRIBE
  on every subscribed topic, else TOPIC_AUTHORIZATION_FAILED naming the topics refused: the
  heartbeat is refused whole, never narrowed to the topics allowed, and the group is left as
  it was.
Gaps: racks are not used by the assignor.
"""

from engine.coordinator.share_protocol import ShareHeartbeatRequest
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
from engine.security import authorize
from kafka_rules.acls import READ

R = ShareGroupHeartbeatResponse


@api(ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, versions=(1, 1))
async def handle_share_group_heartbeat(ctx, request: ShareGroupHeartbeatRequest) -> R:
    try:
        _authorize(ctx, request)
        result = await ctx.coordinator.share.heartbeat(ShareHeartbeatRequest(
            group_id=request.group_id, member_id=request.member_id, member_epoch=request.member_epoch,
            rack_id=request.rack_id, subscribed_topic_names=request.subscribed_topic_names,
            client_id=ctx.client_id or "", client_host=f"/{ctx.client_host}"))
    except ApiError as exc:
        return R(throttle_time_ms=0, error_code=exc.code, error_message=exc.message, member_id=None,
                 member_epoch=0, heartbeat_interval_ms=0, assignment=None)
    return R(throttle_time_ms=0, error_code=0, error_message=None, member_id=result.member_id,
             member_epoch=result.member_epoch, heartbeat_interval_ms=result.heartbeat_interval_ms,
             assignment=None if result.assignment is None else _assignment(ctx.broker.image, result.assignment))


def _authorize(ctx, request: ShareGroupHeartbeatRequest) -> None:
    authorize.require_group(ctx, READ, request.group_id)
    authorize.require_subscribed_topics(ctx, request.subscribed_topic_names)


def _assignment(image, partitions) -> R.Assignment:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return R.Assignment(topic_partitions=[
        R.Assignment.TopicPartitions(topic_id=image.topics[topic].topic_id, partitions=sorted(found))
        for topic, found in sorted(by_topic.items()) if topic in image.topics])
