"""DescribeTransactions: v0 (KIP-664).

For each transactional id this broker coordinates: its state, producer id and epoch,
timeout, start time (-1 when no transaction is open) and partitions. Per id:
TRANSACTIONAL_ID_NOT_FOUND, NOT_COORDINATOR (the admin client looks the coordinator up with
FindCoordinator key type 1), COORDINATOR_LOAD_IN_PROGRESS.
Authorization (as KafkaApis): DESCRIBE on each transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
the transaction's topics the principal may not DESCRIBE are left out.
"""
from kafka.protocol.admin.transactions import DescribeTransactionsRequest, DescribeTransactionsResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

State = DescribeTransactionsResponse.TransactionState


@api(DescribeTransactionsRequest, DescribeTransactionsResponse, versions=(0, 0))
async def handle_describe_transactions(ctx, request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(throttle_time_ms=0, transaction_states=[
        _describe(ctx, tid) for tid in request.transactional_ids])


def _describe(ctx, transactional_id: str) -> State:
    try:
        authorize.require_transactional_id(ctx, DESCRIBE, transactional_id)
        meta = ctx.broker.txn_coordinator.describe(transactional_id)
    except ApiError as exc:
        return State(error_code=exc.code, transactional_id=transactional_id, transaction_state="",
                     transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1, producer_epoch=-1,
                     topics=[])
    by_topic: dict[str, list[int]] = {}
    described = authorize.authorize_topics(ctx, DESCRIBE, {topic for topic, _ in meta.partitions})
    for topic, index in sorted(meta.partitions):
        if topic in described:       # topics the principal may not describe are left out, as in Kafka
            by_topic.setdefault(topic, []).append(index)
    return State(error_code=0, transactional_id=transactional_id, transaction_state=meta.state.label,
                 transaction_timeout_ms=meta.timeout_ms, transaction_start_time_ms=meta.start_ms,
                 producer_id=meta.producer_id, producer_epoch=meta.producer_epoch,
                 topics=[State.TopicData(topic=t, partitions=p) for t, p in by_topic.items()])
