"""InitProducerId: v0-5.

Gives an idempotent producer (transactional_id null) a fresh producer id with epoch 0.
Ids come from blocks the controller reserves durably, so an id is never handed out twice,
even across a crash. A client that passes its current id and epoch (KIP-360, v3+) to
recover gets the same id with the epoch bumped.
Gaps: transactional producers are refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED
(no transaction coordinator yet).
"""
import kafka.errors as Errors
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from engine.protocol.registry import api

MAX_EPOCH = 32767


@api(InitProducerIdRequest, InitProducerIdResponse, versions=(0, 5))
async def handle_init_producer_id(ctx, request: InitProducerIdRequest) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        return InitProducerIdResponse(throttle_time_ms=0,
                                      error_code=Errors.TransactionalIdAuthorizationFailedError.errno,
                                      producer_id=-1, producer_epoch=-1)
    if ctx.api_version >= 3 and request.producer_id >= 0 and 0 <= request.producer_epoch < MAX_EPOCH - 1:
        return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=request.producer_id,
                                      producer_epoch=request.producer_epoch + 1)
    producer_id = ctx.controller.allocate_producer_id()
    return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=producer_id, producer_epoch=0)
