"""ConsumerGroupDescribe: v0-1.

Describes consumer-protocol groups (KIP-848), as `kafka-consumer-groups --describe` and
admin clients' describeConsumerGroups ask for them: the group's state (Empty, Assigning,
Reconciling, Stable), group epoch, assignment epoch and assignor, and per member its ids,
member epoch, client id and host, subscription (names and regex), current assignment and
target assignment, each partition list with topic id and name; v1 adds each member's type
(KIP-1099: 0 for a member of the classic protocol in a mixed group, 1 for the consumer protocol).
- GROUP_ID_NOT_FOUND for an unknown group and for a classic group ("not a consumer group":
  clients then fall back to DescribeGroups); INVALID_GROUP_ID for an empty id;
  NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS per group.
- Authorized operations when asked for: with no authorizer, every group operation.
Gaps: no rack-aware data beyond the member's rack id.
Authorization (as KafkaApis): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), and DESCRIBE
on every topic of its members' assignments and target assignments, else the group answers
TOPIC_AUTHORIZATION_FAILED with no members; include_authorized_operations answers the group
operations the principal may perform.
"""
import kafka.errors as Errors

from engine.coordinator.consumer_group import ConsumerGroup
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE, GROUP
from engine.protocol.specs import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse

Described = ConsumerGroupDescribeResponse.DescribedGroup
Member = Described.Member
Assignment = Member.Assignment
MEMBER_TYPE_CLASSIC, MEMBER_TYPE_CONSUMER = 0, 1


@api(ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, versions=(0, 1))
async def handle_consumer_group_describe(ctx, request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    return ConsumerGroupDescribeResponse(
        throttle_time_ms=0, groups=[_describe(ctx, group_id, request.include_authorized_operations)
                                    for group_id in request.group_ids])


def _describe(ctx, group_id: str, with_operations: bool) -> Described:
    operations = None
    try:
        if not group_id:
            raise ApiError(Errors.InvalidGroupIdError)
        authorize.require_group(ctx, DESCRIBE, group_id)
        operations = authorize.authorized_operations(ctx, GROUP, group_id) if with_operations else None
        group = ctx.coordinator.describe_group(group_id)
        if group is None:
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {group_id} not found.")
        if not isinstance(group, ConsumerGroup):
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {group_id} is not a consumer group.")
    except ApiError as exc:
        return Described(error_code=exc.code, error_message=exc.message, group_id=group_id, group_state="",
                         group_epoch=-1, assignment_epoch=-1, assignor_name="", members=[],
                         authorized_operations=operations)
    if not authorize.may_describe_all(ctx, _assigned_topics(group)):
        return Described(error_code=Errors.TopicAuthorizationFailedError.errno, error_message=authorize.GROUP_TOPICS_REFUSED,
                         group_id=group_id, group_state="", group_epoch=-1, assignment_epoch=-1, assignor_name="",
                         members=[], authorized_operations=None)
    image = ctx.broker.image
    members = [Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                      member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                      subscribed_topic_names=sorted(m.subscribed_topics), subscribed_topic_regex=m.subscribed_regex,
                      assignment=_assignment(image, m.assigned),
                      target_assignment=_assignment(image, group.target.get(m.member_id, frozenset())),
                      member_type=MEMBER_TYPE_CLASSIC if m.uses_classic_protocol else MEMBER_TYPE_CONSUMER)
               for m in group.members.values()]
    return Described(error_code=0, error_message=None, group_id=group_id, group_state=group.consumer_state.value,
                     group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
                     assignor_name=group.assignor_name, members=members, authorized_operations=operations)


def _assigned_topics(group: ConsumerGroup) -> set[str]:
    """The topics of the members' assignments and target assignments, as the answer would show them."""
    return {topic for member_id, member in group.members.items()
            for topic, _ in member.assigned | group.target.get(member_id, frozenset())}


def _assignment(image, partitions) -> Assignment:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return Assignment(topic_partitions=[
        Assignment.TopicPartitions(topic_id=image.topics[topic].topic_id, topic_name=topic, partitions=sorted(found))
        for topic, found in sorted(by_topic.items()) if topic in image.topics])
