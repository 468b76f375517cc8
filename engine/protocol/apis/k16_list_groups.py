"""ListGroups: v0-5.

The groups this broker coordinates (clients ask every broker and merge), with their
protocol type, state (v4+) and type (v5+: "classic"; "consumer" for a group of the
consumer group protocol, KIP-848, whose states are Empty, Assigning, Reconciling, Stable;
"share" for a share group, KIP-932, protocol type "share", states Empty and Stable).
- v4+ states_filter (KIP-518) and v5+ types_filter (KIP-848), case-insensitive.
Authorization: DESCRIBE on the cluster lists every group; otherwise only the groups the
principal may DESCRIBE (as KafkaApis).
"""
from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse

from engine.coordinator.coordinator import group_state, group_type
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE


@api(ListGroupsRequest, ListGroupsResponse, versions=(0, 5))
async def handle_list_groups(ctx, request: ListGroupsRequest) -> ListGroupsResponse:
    states = request.states_filter if ctx.api_version >= 4 else None
    types = request.types_filter if ctx.api_version >= 5 else None
    groups = ctx.coordinator.list_groups(states, types)
    if not authorize.authorize_cluster(ctx, DESCRIBE):
        groups = [g for g in groups if authorize.authorize_group(ctx, DESCRIBE, g.group_id)]
    return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=[
        ListGroupsResponse.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type or "",
                                       group_state=group_state(g), group_type=group_type(g))
        for g in groups])
