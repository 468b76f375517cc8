"""AddOffsetsToTxn: v0-4.

Adds the group's `__consumer_offsets` partition to the producer's transaction (creating that
topic on first use), so the COMMIT or ABORT marker reaches the offsets that TxnOffsetCommit
then writes there. Errors as AddPartitionsToTxn's (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH
for v0-1); COORDINATOR_NOT_AVAILABLE while `__consumer_offsets` cannot be created.
Authorization (as KafkaApis): WRITE on the transactional id, READ on the group.
"""
import kafka.errors as Errors
from kafka.protocol.producer.transaction import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse

from engine.coordinator.group_store import OFFSETS_TOPIC
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ, WRITE
from engine.protocol.txn_errors import for_version


@api(AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, versions=(0, 4))
async def handle_add_offsets_to_txn(ctx, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
    groups = ctx.broker.group_coordinator
    try:
        authorize.require_transactional_id(ctx, WRITE, request.transactional_id)
        authorize.require_group(ctx, READ, request.group_id)
        if not request.group_id:
            raise ApiError(Errors.InvalidGroupIdError)
        if not groups.ensure_offsets_topic():
            raise ApiError(Errors.CoordinatorNotAvailableError)
        partition = (OFFSETS_TOPIC, groups.store.partition_for(request.group_id))
        await ctx.broker.txn_coordinator.add_partitions(request.transactional_id, request.producer_id,
                                                        request.producer_epoch, {partition})
    except ApiError as exc:
        return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=for_version(exc.code, ctx.api_version, 2))
    return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=0)
