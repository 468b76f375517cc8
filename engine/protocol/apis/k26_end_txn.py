"""EndTxn: v0-4.

Commits or aborts the producer's open transaction: PrepareCommit/PrepareAbort is written to
`__transaction_state` and answered; the coordinator then writes the markers to every
partition of the transaction and finally CompleteCommit/CompleteAbort. Until then the
producer's next InitProducerId/AddPartitionsToTxn/EndTxn answers CONCURRENT_TRANSACTIONS.
- Repeating a completed EndTxn (a retry) succeeds; ending in the wrong state (nothing open,
  or the other outcome already decided) is INVALID_TXN_STATE.
- INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (v0-1: INVALID_PRODUCER_EPOCH; also after the
  coordinator aborted the transaction on its timeout, which bumps the epoch), NOT_COORDINATOR.
Gaps: v5 (KIP-890 part 2: an epoch bump per transaction) is not advertised.
Authorization: WRITE on the transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
"""
from kafka.protocol.producer.transaction import EndTxnRequest, EndTxnResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import WRITE
from engine.protocol.txn_errors import for_version


@api(EndTxnRequest, EndTxnResponse, versions=(0, 4))
async def handle_end_txn(ctx, request: EndTxnRequest) -> EndTxnResponse:
    try:
        authorize.require_transactional_id(ctx, WRITE, request.transactional_id)
        await ctx.broker.txn_coordinator.end_txn(request.transactional_id, request.producer_id,
                                                 request.producer_epoch, request.committed)
    except ApiError as exc:
        return EndTxnResponse(throttle_time_ms=0, error_code=for_version(exc.code, ctx.api_version, 2))
    return EndTxnResponse(throttle_time_ms=0, error_code=0)
