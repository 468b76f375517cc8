"""DescribeClientQuotas: v0-1 (KIP-546).

The client quotas set (AlterClientQuotas) for user / client-id entities, filtered by
components as Kafka does: match type 0 a given name, 1 the default entity (null name), 2 any
entity of that type; `strict` keeps only entities of exactly the filtered types; no component
and strict=false lists every entity. An unknown entity type or match type, a type twice, or a
match given where none may be is INVALID_REQUEST for the whole request (entries null).
Only the quotas this engine enforces are ever set here: `controller_mutation_rate`,
`producer_byte_rate` and `consumer_byte_rate` (engine/cluster/client_quotas.py).
Authorization: DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin.client_quotas import DescribeClientQuotasRequest, DescribeClientQuotasResponse

from engine.cluster import client_quotas as CQ
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE_CONFIGS

Entry = DescribeClientQuotasResponse.EntryData


@api(DescribeClientQuotasRequest, DescribeClientQuotasResponse, versions=(0, 1))
async def handle_describe_client_quotas(ctx, request: DescribeClientQuotasRequest) -> DescribeClientQuotasResponse:
    components = [(c.entity_type, c.match_type, c.match) for c in request.components]
    try:
        authorize.require_cluster(ctx, DESCRIBE_CONFIGS)
        found = CQ.describe(ctx.broker.image.client_quotas, components, request.strict)
    except ApiError as exc:
        return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=exc.code, error_message=exc.message,
                                            entries=None)
    entries = [Entry(entity=[Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                     values=[Entry.ValueData(key=k, value=v) for k, v in sorted(values.items())])
               for entity, values in found]
    return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=Errors.NoError.errno, error_message=None,
                                        entries=entries)
