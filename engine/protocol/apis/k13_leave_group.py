"""LeaveGroup: v0-5.

Removes members at once instead of waiting for their session to expire, and rebalances the
group. v0-2 name one member; v3+ a batch, each by member id and/or group.instance.id
(KIP-345: an admin may remove a static member by instance id alone), each with its own
error: UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID. In a consumer-protocol group only classic
members leave this way (a consumer-protocol member is UNKNOWN_MEMBER_ID here).
Gaps: the leave reason (v5) is not kept.
Authorization: READ on the group, else GROUP_AUTHORIZATION_FAILED (as KafkaApis).
"""
from kafka.protocol.consumer import LeaveGroupRequest, LeaveGroupResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ


@api(LeaveGroupRequest, LeaveGroupResponse, versions=(0, 5))
async def handle_leave_group(ctx, request: LeaveGroupRequest) -> LeaveGroupResponse:
    if ctx.api_version <= 2:
        members = [(request.member_id, None)]
    else:
        members = [(m.member_id, m.group_instance_id) for m in request.members]
    try:
        authorize.require_group(ctx, READ, request.group_id)
        error, member_errors = ctx.coordinator.leave_group(request.group_id, members)
    except ApiError as exc:
        error, member_errors = exc.code, []
    if ctx.api_version <= 2:
        return LeaveGroupResponse(throttle_time_ms=0, error_code=error or (member_errors or [0])[0])
    return LeaveGroupResponse(throttle_time_ms=0, error_code=error, members=[
        LeaveGroupResponse.MemberResponse(member_id=member_id, group_instance_id=instance_id, error_code=code)
        for (member_id, instance_id), code in zip(members, member_errors)])
