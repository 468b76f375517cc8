"""DescribeGroups: v0-6.

A group's state, protocol type, members (member id, group.instance.id (v4+), client id,
client host) and - in the Stable state - the chosen protocol and each member's subscription
metadata and assignment bytes, which clients decode (ConsumerProtocolAssignment).
- An unknown group is described as Dead with no members; v6+ also answers
  GROUP_ID_NOT_FOUND (KIP-1043).
- A consumer-protocol group (KIP-848) or a share group (KIP-932) is not a classic group:
  described as Dead with no members, and v6+ answers GROUP_ID_NOT_FOUND ("not a classic
  group"), as Kafka does; their members are in ConsumerGroupDescribe (k69) and
  ShareGroupDescribe (k77).
- v3+: authorized operations when asked for: without an authorizer every group operation
  is allowed (READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS).
- NOT_COORDINATOR for a group this broker does not coordinate.
Authorization: DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED; v3+ include_authorized_operations
answers the group operations the principal may perform (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse

from engine.coordinator.consumer_group import ConsumerGroup
from engine.coordinator.group import GroupState
from engine.coordinator.share_group import ShareGroup
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE, GROUP

Described = DescribeGroupsResponse.DescribedGroup
Member = Described.DescribedGroupMember


@api(DescribeGroupsRequest, DescribeGroupsResponse, versions=(0, 6))
async def handle_describe_groups(ctx, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    with_operations = ctx.api_version >= 3 and request.include_authorized_operations
    return DescribeGroupsResponse(throttle_time_ms=0,
                                  groups=[_describe(ctx, group_id, with_operations) for group_id in request.groups])


def _describe(ctx, group_id: str, with_operations: bool) -> Described:
    if not authorize.authorize_group(ctx, DESCRIBE, group_id):
        return _described(group_id, "", Errors.GroupAuthorizationFailedError.errno, None, None)
    operations = authorize.authorized_operations(ctx, GROUP, group_id) if with_operations else None
    try:
        group = ctx.coordinator.describe_group(group_id)
    except ApiError as exc:
        return _described(group_id, "", exc.code, exc.message, operations)
    if group is None or isinstance(group, (ConsumerGroup, ShareGroup)):
        if ctx.api_version >= 6:
            reason = "not found" if group is None else "is not a classic group"
            return _described(group_id, GroupState.DEAD.value, Errors.GroupIdNotFoundError.errno,
                              f"Group {group_id} {reason}.", operations)
        return _described(group_id, GroupState.DEAD.value, 0, None, operations)
    stable = group.is_(GroupState.STABLE)
    members = [Member(member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                      client_host=m.client_host,
                      member_metadata=m.metadata(group.protocol_name) if stable else b"",
                      member_assignment=m.assignment if stable else b"")
               for m in group.members.values()]
    return Described(error_code=0, error_message=None, group_id=group_id, group_state=group.state.value,
                     protocol_type=group.protocol_type or "", protocol_data=group.protocol_name if stable else "",
                     members=members, authorized_operations=operations)


def _described(group_id: str, state: str, error: int, message, operations) -> Described:
    return Described(error_code=error, error_message=message, group_id=group_id, group_state=state,
                     protocol_type="", protocol_data="", members=[], authorized_operations=operations)
