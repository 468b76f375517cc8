"""ReadShareGroupState: v0 (KIP-932; an internal API, between brokers).

A share partition's leader reads the partition's state from its share coordinator when it
first serves the group (engine/share/partition.py): the start offset (-1 if none yet), the
state epoch and the state batches. The leader epoch it names is recorded, and an older one
than recorded is FENCED_LEADER_EPOCH; -1 reads without fencing (the group coordinator's
DescribeShareGroupOffsets). Per partition: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
UNKNOWN_TOPIC_OR_PARTITION.
Authorization: CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every
partition (as KafkaApis); the brokers' own connections always have it.
"""
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import ReadShareGroupStateRequest, ReadShareGroupStateResponse
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION

R = ReadShareGroupStateResponse
Result = R.ReadStateResult
Partition = Result.PartitionResult


@api(ReadShareGroupStateRequest, ReadShareGroupStateResponse, versions=(0, 0))
async def handle_read_share_group_state(ctx, request: ReadShareGroupStateRequest) -> R:
    coordinator = ctx.broker.share_coordinator
    results = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            try:
                authorize.require_cluster(ctx, CLUSTER_ACTION)
                state = coordinator.read((request.group_id, topic.topic_id, p.partition), p.leader_epoch)
            except ApiError as exc:
                partitions.append(Partition(partition=p.partition, error_code=exc.code, error_message=exc.message,
                                            state_epoch=0, start_offset=-1, state_batches=[]))
                continue
            partitions.append(Partition(
                partition=p.partition, error_code=0, error_message=None, state_epoch=state.state_epoch,
                start_offset=state.start_offset,
                state_batches=[Partition.StateBatch(first_offset=b.first_offset, last_offset=b.last_offset,
                                                    delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                               for b in state.batches]))
        results.append(Result(topic_id=topic.topic_id, partitions=partitions))
    return R(results=results)
