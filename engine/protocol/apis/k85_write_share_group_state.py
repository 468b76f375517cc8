"""WriteShareGroupState: v0 (KIP-932; an internal API, between brokers).

A share partition's leader writes what changed - the start offset (-1: unchanged) and state
batches of acknowledged, archived and released records - to its share coordinator, which
appends a ShareUpdate (or, every `share.coordinator.snapshot.update.records.per.snapshot`
writes, a ShareSnapshot) to `__share_group_state` and answers once it is replicated. An
older leader epoch is FENCED_LEADER_EPOCH, an older state epoch FENCED_STATE_EPOCH. Per
partition also NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION,
KAFKA_STORAGE_ERROR, COORDINATOR_NOT_AVAILABLE (not replicated in time).
Authorization: CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every
partition (as KafkaApis); the brokers' own connections always have it.
"""
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import WriteShareGroupStateRequest, WriteShareGroupStateResponse
from engine.security import authorize
from engine.share.state import PERSISTED_STATES, StateBatch
from kafka_rules.acls import CLUSTER_ACTION

R = WriteShareGroupStateResponse
Result = R.WriteStateResult


@api(WriteShareGroupStateRequest, WriteShareGroupStateResponse, versions=(0, 0))
async def handle_write_share_group_state(ctx, request: WriteShareGroupStateRequest) -> R:
    coordinator = ctx.broker.share_coordinator
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            batches = [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                       for b in p.state_batches]
            try:
                authorize.require_cluster(ctx, CLUSTER_ACTION)
                if any(b.delivery_state not in PERSISTED_STATES or b.first_offset > b.last_offset for b in batches):
                    raise ValueError("a state batch has an unknown delivery state or is empty")
                await coordinator.write((request.group_id, topic.topic_id, p.partition), state_epoch=p.state_epoch,
                                        leader_epoch=p.leader_epoch, start_offset=p.start_offset, batches=batches)
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=0, error_message=None))
            except ApiError as exc:
                partitions.append(Result.PartitionResult(partition=p.partition, error_code=exc.code,
                                                         error_message=exc.message))
        results.append(Result(topic_id=topic.topic_id, partitions=partitions))
    return R(results=results)
