"""ConsumerGroupHeartbeat: v0-1.

The consumer group protocol (KIP-848): the coordinator, not a group leader, assigns the
partitions, and each member converges on its share one heartbeat at a time
(engine/coordinator/consumer_protocol.py). A member joins with epoch 0 (v1: under a member
id it generated, KIP-1082; v0 may leave it empty and get one), leaves with -1, and a static
member (`group.instance.id`) leaves for a while with -2, keeping its partitions for its next
instance. Fields left null mean "unchanged since the last heartbeat".
- Assignors: `group.consumer.assignors` (default `uniform,range`; the first is the default),
  chosen per member by `ServerAssignor` (librdkafka's `group.remote.assignor`).
- A partition goes to its new owner only after the old owner's heartbeat no longer lists it.
- `group.consumer.heartbeat.interval.ms` (5 s) is sent back; `group.consumer.session.timeout.ms`
  (45 s) without a heartbeat removes the member (a group's own `consumer.heartbeat.interval.ms`
  and `consumer.session.timeout.ms` win, engine/coordinator/group_configs.py); a member that keeps revoked partitions past
  its rebalance timeout (max.poll.interval.ms) is removed too.
- Subscription by topic names, or by a regex (v1; matched in full against the topic names
  with RE2, as Kafka's RE2/J; once per regex and metadata change, not at every heartbeat).
- New topics, deleted topics and added partitions in a subscription bump the group epoch at
  the next heartbeat of any member.
- Errors as Kafka returns them: INVALID_REQUEST (with Kafka's messages), UNSUPPORTED_ASSIGNOR,
  INVALID_REGULAR_EXPRESSION (a regex RE2 cannot compile),
  FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID,
  GROUP_MAX_SIZE_REACHED (`group.consumer.max.size`), GROUP_ID_NOT_FOUND for a classic group
  with members that cannot be upgraded (`group.consumer.migration.policy`, a protocol type other
  than `consumer`, a malformed subscription), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
  UNKNOWN_SERVER_ERROR for a member whose record could not fit in a batch of `__consumer_offsets`
  (megabytes of topic names), refused before it changes the group, as Kafka does.
- The group's changes are written to `__consumer_offsets` as Kafka's ConsumerGroup* records
  and the answer waits until they are replicated, so the group survives a restart or a
  coordinator move (consumer_group_records.py).
- A heartbeat at epoch > 0 for a group the coordinator does not know gets UNKNOWN_MEMBER_ID
  (Kafka: GROUP_ID_NOT_FOUND, which librdkafka takes as fatal), so the member rejoins.
Gaps: no ConsumerGroupPartitionMetadata record (key v4): a loaded group takes its topics'
metadata from the image. No mixed groups: classic members cannot join a consumer-protocol
group (KIP-848's online upgrade and downgrade). Racks are not used by the assignors. No
group-level configs (KIP-848's IncrementalAlterConfigs on GROUP resources).
Authorization (as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED; DESCRIBE on
every topic subscribed to by name, else TOPIC_AUTHORIZATION_FAILED naming the topics refused
(nothing changes in the group); a regex matches only the topics the member's principal may
describe. So a member never learns the id or partitions of a topic it may not describe. A
regex member's filter is not in the group's records: after the coordinator moves or restarts,
its regex matches every topic again until its next heartbeat.
"""
from engine.coordinator.consumer_protocol import HeartbeatRequest
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ
from engine.protocol.specs import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse

R = ConsumerGroupHeartbeatResponse


@api(ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, versions=(0, 1))
async def handle_consumer_group_heartbeat(ctx, request: ConsumerGroupHeartbeatRequest) -> R:
    image = ctx.broker.image
    try:
        authorize.require_group(ctx, READ, request.group_id)
        authorize.require_subscribed_topics(ctx, request.subscribed_topic_names)
        result = await ctx.coordinator.consumer_group_heartbeat(HeartbeatRequest(
            group_id=request.group_id, member_id=request.member_id, member_epoch=request.member_epoch,
            instance_id=request.instance_id, rack_id=request.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms, subscribed_topic_names=request.subscribed_topic_names,
            subscribed_topic_regex=request.subscribed_topic_regex if ctx.api_version >= 1 else None,
            server_assignor=request.server_assignor, owned=_owned(image, request.topic_partitions),
            client_id=ctx.client_id or "", client_host=f"/{ctx.client_host}",
            describable=authorize.describable_topics(ctx)))
    except ApiError as exc:
        return R(throttle_time_ms=0, error_code=exc.code, error_message=exc.message, member_id=None,
                 member_epoch=0, heartbeat_interval_ms=0, assignment=None)
    return R(throttle_time_ms=0, error_code=0, error_message=None, member_id=result.member_id,
             member_epoch=result.member_epoch, heartbeat_interval_ms=result.heartbeat_interval_ms,
             assignment=None if result.assignment is None else _assignment(image, result.assignment))


def _owned(image, topic_partitions):
    """The request's partitions by topic name; ids of topics that no longer exist are dropped."""
    if topic_partitions is None:
        return None
    owned = set()
    for topic in topic_partitions:
        state = image.topics_by_id.get(topic.topic_id)
        if state is not None:
            owned.update((state.name, p) for p in topic.partitions)
    return frozenset(owned)


def _assignment(image, partitions) -> R.Assignment:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return R.Assignment(topic_partitions=[
        R.Assignment.TopicPartitions(topic_id=image.topics[topic].topic_id, partitions=sorted(found))
        for topic, found in sorted(by_topic.items()) if topic in image.topics])
