"""JoinGroup: v0-9.

Classic group membership (engine/coordinator/membership.py): the request waits until the
group's rebalance completes, then answers with the generation, the chosen protocol, the
leader, and - to the leader only - every member's metadata.
- v0 has no rebalance timeout: the session timeout stands in for it.
- v4+: a new member first gets MEMBER_ID_REQUIRED with its member id and must join again
  with it (KIP-394).
- v5+: `group_instance_id` makes the member static (KIP-345).
- v7+: the response carries the protocol type (KIP-559); v9 skip_assignment is always false.
- Errors: INVALID_GROUP_ID, NOT_COORDINATOR, INVALID_SESSION_TIMEOUT (outside
  group.min/max.session.timeout.ms), INCONSISTENT_GROUP_PROTOCOL (a protocol type or
  protocols the group does not share), UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
  GROUP_MAX_SIZE_REACHED, COORDINATOR_NOT_AVAILABLE.
- A consumer-protocol group with members (KIP-848) answers a classic member at once, as a
  follower (no leader): its generation is its member epoch, and its partitions come from the
  group's server-side assignor at SyncGroup (coordinator/classic_members.py).
Gaps: the join reason (v8+) is only logged by clients' choice, not kept.
Authorization: READ on the group, else GROUP_AUTHORIZATION_FAILED (as KafkaApis).
"""
from kafka.protocol.consumer import JoinGroupRequest, JoinGroupResponse

from engine.coordinator.group import JoinResult
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ

Member = JoinGroupResponse.JoinGroupResponseMember


@api(JoinGroupRequest, JoinGroupResponse, versions=(0, 9))
async def handle_join_group(ctx, request: JoinGroupRequest) -> JoinGroupResponse:
    version = ctx.api_version
    try:
        authorize.require_group(ctx, READ, request.group_id)
        result = await ctx.coordinator.join_group(
            group_id=request.group_id, member_id=request.member_id,
            group_instance_id=request.group_instance_id if version >= 5 else None,
            require_known_member_id=version >= 4, client_id=ctx.client_id or "", client_host=f"/{ctx.client_host}",
            rebalance_timeout_ms=request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms,
            session_timeout_ms=request.session_timeout_ms, protocol_type=request.protocol_type,
            protocols=[(p.name, bytes(p.metadata)) for p in request.protocols])
    except ApiError as exc:
        result = JoinResult(exc.code, request.member_id)
    protocol_name = result.protocol_name if result.protocol_name is not None or version >= 7 else ""
    return JoinGroupResponse(
        throttle_time_ms=0, error_code=result.error, generation_id=result.generation_id,
        protocol_type=result.protocol_type, protocol_name=protocol_name, leader=result.leader_id,
        skip_assignment=False, member_id=result.member_id,
        members=[Member(member_id=m, group_instance_id=i, metadata=data) for m, i, data in result.members])
