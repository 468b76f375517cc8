"""DeleteShareGroupState: v0 (KIP-932; an internal API, between brokers).

The group coordinator deletes share partitions' state (DeleteShareGroupOffsets, DeleteGroups):
the share coordinator appends tombstones for the partition's ShareSnapshot and ShareUpdate keys.
Per partition: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, KAFKA_STORAGE_ERROR.
Authorization: CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every
partition (as KafkaApis); the brokers' own connections always have it.
"""
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import DeleteShareGroupStateRequest, DeleteShareGroupStateResponse
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION

R = DeleteShareGroupStateResponse
Result = R.DeleteStateResult


@api(DeleteShareGroupStateRequest, DeleteShareGroupStateResponse, versions=(0, 0))
async def handle_delete_share_group_state(ctx, request: DeleteShareGroupStateRequest) -> R:
    coordinator = ctx.broker.share_coordinator
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            try:
                authorize.require_cluster(ctx, CLUSTER_ACTION)
                await coordinator.delete((request.group_id, topic.topic_id, p.partition))
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=0, error_message=None))
            except ApiError as exc:
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=exc.code,
                                                         error_message=exc.message))
        results.append(Result(topic_id=topic.topic_id, partitions=partitions))
    return R(results=results)
