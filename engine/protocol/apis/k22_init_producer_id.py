"""InitProducerId: v0-5.

- Idempotent producers (transactional_id null) get a fresh producer id with epoch 0. Ids come
  from blocks the controller reserves durably, so an id is never handed out twice, even
  across a crash. A client that passes its current id and epoch (KIP-360, v3+) to recover
  gets the same id with the epoch bumped.
- Transactional producers go to the id's transaction coordinator
  (engine/coordinator/transactions): the epoch is bumped, fencing older instances of the
  producer (PRODUCER_FENCED for them; v0-3 clients hear INVALID_PRODUCER_EPOCH); an open
  transaction is aborted first and the answer is CONCURRENT_TRANSACTIONS until that
  completes (clients retry); past epoch 32766 the id moves to a new producer id.
  transaction_timeout_ms must be in (0, transaction.max.timeout.ms], else
  INVALID_TRANSACTION_TIMEOUT. KIP-360 (v3+): a passed producer id/epoch must be the current
  ones or those before the last bump, else PRODUCER_FENCED.
- NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE as for groups.
Gaps: v6's KIP-939 fields (enable_2pc, keep_prepared_txn) are not supported (v6 is not advertised).
Authorization (as KafkaApis): WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
without one, IDEMPOTENT_WRITE on the cluster or WRITE on any topic (CLUSTER_AUTHORIZATION_FAILED).
"""
import kafka.errors as Errors
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import IDEMPOTENT_WRITE, TOPIC, WRITE
from engine.protocol.txn_errors import for_version

MAX_EPOCH = 32767


@api(InitProducerIdRequest, InitProducerIdResponse, versions=(0, 5))
async def handle_init_producer_id(ctx, request: InitProducerIdRequest) -> InitProducerIdResponse:
    recovering = ctx.api_version >= 3 and request.producer_id >= 0
    refused = _refusal(ctx, request.transactional_id)
    if refused is not None:
        return InitProducerIdResponse(throttle_time_ms=0, error_code=refused, producer_id=-1, producer_epoch=-1)
    if request.transactional_id is not None:
        try:
            producer_id, epoch = await ctx.broker.txn_coordinator.init_producer_id(
                request.transactional_id, request.transaction_timeout_ms,
                request.producer_id if recovering else -1, request.producer_epoch if recovering else -1)
        except ApiError as exc:
            return InitProducerIdResponse(throttle_time_ms=0, error_code=for_version(exc.code, ctx.api_version, 4),
                                          producer_id=-1, producer_epoch=-1)
        return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=producer_id, producer_epoch=epoch)
    if recovering and 0 <= request.producer_epoch < MAX_EPOCH - 1:
        return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=request.producer_id,
                                      producer_epoch=request.producer_epoch + 1)
    producer_id = ctx.controller.allocate_producer_id()
    return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=producer_id, producer_epoch=0)


def _refusal(ctx, transactional_id: str | None) -> int | None:
    """A transactional producer needs WRITE on its id; an idempotent one IDEMPOTENT_WRITE on the
    cluster or WRITE on some topic (KIP-679, Kafka 2.8+)."""
    if transactional_id is not None:
        if not authorize.authorize_transactional_id(ctx, WRITE, transactional_id):
            return Errors.TransactionalIdAuthorizationFailedError.errno
    elif not (authorize.authorize_cluster(ctx, IDEMPOTENT_WRITE)
              or authorize.authorize_by_resource_type(ctx, WRITE, TOPIC)):
        return Errors.ClusterAuthorizationFailedError.errno
    return None
