"""SyncGroup: v0-5.

After a rebalance's join phase, every member sends SyncGroup; the leader's carries the
assignment for all. The requests wait until the assignment is stored in
`__consumer_offsets` and then each member gets its own (members the leader left out get
an empty one). In a Stable group the member's current assignment comes back at once.
- v3+: group_instance_id (KIP-345); v5+: protocol type and name are checked against the
  group's (INCONSISTENT_GROUP_PROTOCOL, KIP-559) and returned.
- Errors: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS (a new rebalance
  began: rejoin), FENCED_INSTANCE_ID, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE.
- A classic member of a consumer-protocol group gets at once the partitions the group's
  server-side assignor lets it use now (coordinator/classic_members.py).
Authorization: READ on the group, else GROUP_AUTHORIZATION_FAILED (as KafkaApis).
"""
from kafka.protocol.consumer import SyncGroupRequest, SyncGroupResponse

from engine.coordinator.group import SyncResult
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ


@api(SyncGroupRequest, SyncGroupResponse, versions=(0, 5))
async def handle_sync_group(ctx, request: SyncGroupRequest) -> SyncGroupResponse:
    version = ctx.api_version
    try:
        authorize.require_group(ctx, READ, request.group_id)
        result = await ctx.coordinator.sync_group(
            group_id=request.group_id, generation_id=request.generation_id, member_id=request.member_id,
            group_instance_id=request.group_instance_id if version >= 3 else None,
            protocol_type=request.protocol_type if version >= 5 else None,
            protocol_name=request.protocol_name if version >= 5 else None,
            assignments={a.member_id: bytes(a.assignment) for a in request.assignments})
    except ApiError as exc:
        result = SyncResult(exc.code)
    return SyncGroupResponse(throttle_time_ms=0, error_code=result.error, protocol_type=result.protocol_type,
                             protocol_name=result.protocol_name, assignment=result.assignment)
