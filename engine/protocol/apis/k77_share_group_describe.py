"""ShareGroupDescribe: v1 (KIP-932).

Describes share groups, as `kafka-share-groups --describe` and admin clients'
describeShareGroups ask for them: the group's state (Empty, Stable), group epoch, assignment
epoch and assignor (simple), and per member its id, rack, member epoch, client id and host,
subscribed topic names and assigned partitions (topic id and name).
- GROUP_ID_NOT_FOUND for an unknown group and for a group of another type ("not a share
  group"); INVALID_GROUP_ID for an empty id; NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS
  per group.
- DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), and DESCRIBE on every topic of its
  members' assignments, else the group answers TOPIC_AUTHORIZATION_FAILED with no members (as
  KafkaApis); authorized operations when asked for, as the principal may perform them (with no
  authorizer, every group operation).
"""
import kafka.errors as Errors

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import ShareGroupDescribeRequest, ShareGroupDescribeResponse
from engine.security import authorize
from kafka_rules.acls import DESCRIBE, GROUP

Described = ShareGroupDescribeResponse.DescribedGroup
Member = Described.Member


@api(ShareGroupDescribeRequest, ShareGroupDescribeResponse, versions=(1, 1))
async def handle_share_group_describe(ctx, request: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse:
    return ShareGroupDescribeResponse(
        throttle_time_ms=0, groups=[_describe(ctx, group_id, request.include_authorized_operations)
                                    for group_id in request.group_ids])


def _describe(ctx, group_id: str, with_operations: bool) -> Described:
    operations = None
    try:
        authorize.require_group(ctx, DESCRIBE, group_id)
        operations = authorize.authorized_operations(ctx, GROUP, group_id) if with_operations else None
        group = ctx.coordinator.share.describe(group_id)
    except ApiError as exc:
        return Described(error_code=exc.code, error_message=exc.message, group_id=group_id, group_state="",
                         group_epoch=-1, assignment_epoch=-1, assignor_name="", members=[],
                         authorized_operations=operations)
    if not authorize.may_describe_all(ctx, {topic for m in group.members.values() for topic, _ in m.assigned}):
        return Described(error_code=Errors.TopicAuthorizationFailedError.errno, error_message=authorize.GROUP_TOPICS_REFUSED,
                         group_id=group_id, group_state="", group_epoch=-1, assignment_epoch=-1, assignor_name="",
                         members=[], authorized_operations=None)
    image = ctx.broker.image
    members = [Member(member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch, client_id=m.client_id,
                      client_host=m.client_host, subscribed_topic_names=sorted(m.subscribed_topics),
                      assignment=_assignment(image, m.assigned))
               for m in group.members.values()]
    return Described(error_code=0, error_message=None, group_id=group_id, group_state=group.share_state,
                     group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
                     assignor_name=group.assignor_name, members=members, authorized_operations=operations)


def _assignment(image, partitions) -> Member.Assignment:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return Member.Assignment(topic_partitions=[
        Member.Assignment.TopicPartitions(topic_id=image.topics[topic].topic_id, topic_name=topic,
                                          partitions=sorted(found))
        for topic, found in sorted(by_topic.items()) if topic in image.topics])
