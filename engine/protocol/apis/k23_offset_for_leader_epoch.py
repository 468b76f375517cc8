"""OffsetForLeaderEpoch: v2-4 (KIP-101, KIP-320).

Clients call it after a leader change to check that their position did not diverge.
The answer is the end offset of the requested epoch: for the current epoch, the log end
offset; a future epoch is UNKNOWN_LEADER_EPOCH, an older current_leader_epoch
FENCED_LEADER_EPOCH.
Gap: leaders never change yet, so there is one epoch per partition and no epoch cache;
an older requested epoch is answered with the log end offset of epoch 0's only leader.
"""
import kafka.errors as Errors
from kafka.protocol.consumer import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse

from engine.errors import ApiError
from engine.protocol.apis.k01_fetch import _check_leader_epoch
from engine.protocol.registry import api

TopicResult = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
EpochEndOffset = TopicResult.EpochEndOffset


@api(OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, versions=(2, 4))
async def handle_offset_for_leader_epoch(ctx, request):
    topics = [TopicResult(topic=t.topic, partitions=[_end_offset(ctx, t.topic, p) for p in t.partitions])
              for t in request.topics]
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)


def _end_offset(ctx, topic: str, wanted) -> EpochEndOffset:
    try:
        partition = ctx.broker.leader_partition(topic, wanted.partition)
        _check_leader_epoch(partition, wanted.current_leader_epoch)
        if wanted.leader_epoch > partition.leader_epoch:
            raise ApiError(Errors.UnknownLeaderEpochError)
    except ApiError as exc:
        return EpochEndOffset(error_code=exc.code, partition=wanted.partition, leader_epoch=-1, end_offset=-1)
    return EpochEndOffset(error_code=0, partition=wanted.partition, leader_epoch=partition.leader_epoch,
                          end_offset=partition.log.log_end_offset)
