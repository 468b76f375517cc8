"""ListTransactions: v0-2 (KIP-664, KIP-994, KIP-1152).

The transactional ids this broker coordinates (the admin client asks every broker), with
producer id and state, filtered by state names (unknown names are echoed in
unknown_state_filters and match nothing), producer ids, v1+ duration_filter (transactions open
at least that many ms; -1: no filter) and v2+ transactional_id_pattern (a regular expression
the whole id must match; an invalid one is INVALID_REQUEST). Patterns are RE2's (linear time,
so a hostile one cannot hold the event loop), where Kafka compiles Java's: the same for the
usual patterns; backreferences and lookarounds are refused.
Authorization: only the transactional ids the principal may DESCRIBE are listed (as KafkaApis).
"""
import kafka.errors as Errors
import re2
from kafka.protocol.admin.transactions import ListTransactionsRequest, ListTransactionsResponse

from engine.coordinator.transactions.records import TxnState
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

State = ListTransactionsResponse.TransactionState


@api(ListTransactionsRequest, ListTransactionsResponse, versions=(0, 2))
async def handle_list_transactions(ctx, request: ListTransactionsRequest) -> ListTransactionsResponse:
    wanted = {name: TxnState.from_label(name) for name in request.state_filters or []}
    unknown = [name for name, state in wanted.items() if state is None]
    pattern = request.transactional_id_pattern if ctx.api_version >= 2 else None
    if pattern:
        try:
            re2.compile(pattern)
        except re2.error:
            return ListTransactionsResponse(throttle_time_ms=0, error_code=Errors.InvalidRequestError.errno,
                                            unknown_state_filters=[], transaction_states=[])
    if wanted and len(unknown) == len(wanted):
        found = []
    else:
        found = ctx.broker.txn_coordinator.list_transactions(
            states={s for s in wanted.values() if s is not None}, producer_ids=set(request.producer_id_filters or []),
            min_duration_ms=request.duration_filter if ctx.api_version >= 1 else -1, pattern=pattern)
    found = [m for m in found if authorize.authorize_transactional_id(ctx, DESCRIBE, m.transactional_id)]
    return ListTransactionsResponse(throttle_time_ms=0, error_code=0, unknown_state_filters=unknown,
                                    transaction_states=[State(transactional_id=m.transactional_id,
                                                              producer_id=m.producer_id,
                                                              transaction_state=m.state.label) for m in found])
