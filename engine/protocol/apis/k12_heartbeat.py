"""Heartbeat: v0-4.

Keeps a member's session alive. Answers REBALANCE_IN_PROGRESS while the group rebalances
(the member must rejoin), ILLEGAL_GENERATION for an old generation, UNKNOWN_MEMBER_ID for a
member the group does not know, FENCED_INSTANCE_ID (v3+) for a replaced static member,
NOT_COORDINATOR if this broker does not coordinate the group. A classic member of a
consumer-protocol group (KIP-848's mixed groups) hears REBALANCE_IN_PROGRESS while it is behind
the group epoch or has partitions to give up or collect (coordinator/classic_members.py).
Authorization: READ on the group, else GROUP_AUTHORIZATION_FAILED (as KafkaApis).
"""
from kafka.protocol.consumer import HeartbeatRequest, HeartbeatResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ


@api(HeartbeatRequest, HeartbeatResponse, versions=(0, 4))
async def handle_heartbeat(ctx, request: HeartbeatRequest) -> HeartbeatResponse:
    try:
        authorize.require_group(ctx, READ, request.group_id)
        error = ctx.coordinator.heartbeat(
            group_id=request.group_id, member_id=request.member_id, generation_id=request.generation_id,
            group_instance_id=request.group_instance_id if ctx.api_version >= 3 else None)
    except ApiError as exc:
        error = exc.code
    return HeartbeatResponse(throttle_time_ms=0, error_code=error)
