"""OffsetForLeaderEpoch: v2-4 (KIP-101, KIP-279, KIP-320).

Followers (replica_id >= 0) and clients (after a leader change) ask where a leader epoch
ends on the leader: the answer comes from the leader's epoch cache, the largest epoch at or
below the requested one and the offset where the next epoch began (the log end offset for
the current epoch); an epoch older than everything known is -1/-1. A current_leader_epoch
older than the leader's is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
Authorization (as KafkaApis): CLUSTER_ACTION on the cluster (followers), else DESCRIBE on each
topic (TOPIC_AUTHORIZATION_FAILED).
"""
import kafka.errors as Errors
from kafka.protocol.consumer import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION, DESCRIBE

TopicResult = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
EpochEndOffset = TopicResult.EpochEndOffset


@api(OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, versions=(2, 4))
async def handle_offset_for_leader_epoch(ctx, request):
    names = [t.topic for t in request.topics]
    allowed = set(names) if authorize.authorize_cluster(ctx, CLUSTER_ACTION) else \
        authorize.authorize_topics(ctx, DESCRIBE, names)
    topics = [TopicResult(topic=t.topic, partitions=[
        _end_offset(ctx, t.topic, p) if t.topic in allowed else
        EpochEndOffset(error_code=Errors.TopicAuthorizationFailedError.errno, partition=p.partition, leader_epoch=-1,
                       end_offset=-1) for p in t.partitions])
        for t in request.topics]
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)


def _end_offset(ctx, topic: str, wanted) -> EpochEndOffset:
    try:
        partition = ctx.broker.leader_partition(topic, wanted.partition)
        partition.check_leader_epoch(wanted.current_leader_epoch)
    except ApiError as exc:
        return EpochEndOffset(error_code=exc.code, partition=wanted.partition, leader_epoch=-1, end_offset=-1)
    log = partition.log
    epoch, end_offset = log.leader_epoch_cache.end_offset_for(wanted.leader_epoch, log.log_end_offset)
    return EpochEndOffset(error_code=0, partition=wanted.partition, leader_epoch=epoch, end_offset=end_offset)
