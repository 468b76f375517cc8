"""InitializeShareGroupState: v0 (KIP-932; an internal API, between brokers).

The group coordinator asks a share coordinator (engine/share/coordinator.py) to give share
partitions a fresh state: a state epoch and a start offset (-1: the partition's leader
decides it from `share.auto.offset.reset`). A state epoch not above the partition's current
one is FENCED_STATE_EPOCH. Per partition: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
UNKNOWN_TOPIC_OR_PARTITION, KAFKA_STORAGE_ERROR.
Authorization: CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every
partition (as KafkaApis); the brokers' own connections always have it.
"""
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import InitializeShareGroupStateRequest, InitializeShareGroupStateResponse
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION

R = InitializeShareGroupStateResponse
Result = R.InitializeStateResult


@api(InitializeShareGroupStateRequest, InitializeShareGroupStateResponse, versions=(0, 0))
async def handle_initialize_share_group_state(ctx, request: InitializeShareGroupStateRequest) -> R:
    coordinator = ctx.broker.share_coordinator
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            try:
                authorize.require_cluster(ctx, CLUSTER_ACTION)
                await coordinator.initialize((request.group_id, topic.topic_id, p.partition),
                                             state_epoch=p.state_epoch, start_offset=p.start_offset)
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=0, error_message=None))
            except ApiError as exc:
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=exc.code,
                                                         error_message=exc.message))
        results.append(Result(topic_id=topic.topic_id, partitions=partitions))
    return R(results=results)
