"""DeleteGroups: v0-2.

Deletes Empty groups: tombstones for the group and all its offsets go to
`__consumer_offsets`. NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for unknown
groups, NOT_COORDINATOR for groups this broker does not coordinate.
Authorization: DELETE on each group, else GROUP_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin import DeleteGroupsRequest, DeleteGroupsResponse

from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DELETE


@api(DeleteGroupsRequest, DeleteGroupsResponse, versions=(0, 2))
async def handle_delete_groups(ctx, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    deletable = [g for g in request.groups_names if authorize.authorize_group(ctx, DELETE, g)]
    results = await ctx.coordinator.delete_groups(deletable) if deletable else {}
    results = {g: results.get(g, Errors.GroupAuthorizationFailedError.errno) for g in request.groups_names}
    return DeleteGroupsResponse(throttle_time_ms=0, results=[
        DeleteGroupsResponse.DeletableGroupResult(group_id=group_id, error_code=results[group_id])
        for group_id in request.groups_names])
