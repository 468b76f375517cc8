"""ReadShareGroupStateSummary: v0 (KIP-932; an internal API, between brokers).

A share partition's start offset and state epoch, without its state batches and without
fencing or recording a leader epoch. Per partition: NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION.
Authorization: CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every
partition (as KafkaApis); the brokers' own connections always have it.
"""
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION

R = ReadShareGroupStateSummaryResponse
Result = R.ReadStateSummaryResult


@api(ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse, versions=(0, 0))
async def handle_read_share_group_state_summary(ctx, request: ReadShareGroupStateSummaryRequest) -> R:
    coordinator = ctx.broker.share_coordinator
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            try:
                authorize.require_cluster(ctx, CLUSTER_ACTION)
                state = coordinator.summary((request.group_id, topic.topic_id, p.partition))
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=0, error_message=None,
                                                         state_epoch=state.state_epoch,
                                                         start_offset=state.start_offset))
            except ApiError as exc:
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=exc.code,
                                                         error_message=exc.message, state_epoch=0, start_offset=-1))
        results.append(Result(topic_id=topic.topic_id, partitions=partitions))
    return R(results=results)
