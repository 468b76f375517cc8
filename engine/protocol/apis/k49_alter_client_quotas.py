"""AlterClientQuotas: v0-1 (KIP-546).

Sets or removes quota values of user / client-id entities (a null name is that type's
default, `<default>` in kafka-configs), persisted in the metadata journal and applied at
once by every broker. Each entry is applied whole or refused, with INVALID_REQUEST for an
unknown or repeated entity type, an empty name, a key twice, a value that is not a positive
number, or a quota this engine does not enforce. Enforced, so accepted: `controller_mutation_rate`
(KIP-599), `producer_byte_rate` and `consumer_byte_rate` (KIP-13/219: Produce and Fetch answer
with throttle_time_ms and mute the connection), `request_percentage` (KIP-124: the event loop's
and worker threads' time on a client's requests, engine/protocol/request_quota.py), and
`connection_creation_rate` of `ip` entities (KIP-612: an address or the default IP, alone; a whole number up to Kafka's INT). validate_only checks and changes nothing.
Entries are taken ENTRIES_PER_COMMIT to a metadata commit, in slices of the event loop
(engine/cluster/slices.py): a request of tens of thousands never holds the other connections.
Authorization: ALTER_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest, AlterClientQuotasResponse

from engine.cluster import slices
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER_CONFIGS

Entry = AlterClientQuotasResponse.EntryData
ENTRIES_PER_COMMIT = 500


@api(AlterClientQuotasRequest, AlterClientQuotasResponse, versions=(0, 1))
async def handle_alter_client_quotas(ctx, request: AlterClientQuotasRequest) -> AlterClientQuotasResponse:
    if not authorize.authorize_cluster(ctx, ALTER_CONFIGS):
        error = Errors.ClusterAuthorizationFailedError
        return AlterClientQuotasResponse(throttle_time_ms=0, entries=[
            Entry(error_code=error.errno, error_message=None, entity=[
                Entry.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity])
            for entry in request.entries])
    changes = [([(e.entity_type, e.entity_name) for e in entry.entity],
                [(op.key, op.value, op.remove) for op in entry.ops]) for entry in request.entries]
    errors = []
    with slices.Pacer() as pacer:
        for start in range(0, len(changes), ENTRIES_PER_COMMIT):
            errors += ctx.controller.alter_client_quotas(changes[start:start + ENTRIES_PER_COMMIT],
                                                         validate_only=request.validate_only)
            await pacer.tick()
    entries = [Entry(error_code=error.code if error else Errors.NoError.errno,
                     error_message=error.message if error else None,
                     entity=[Entry.EntityData(entity_type=e.entity_type, entity_name=e.entity_name)
                             for e in entry.entity])
               for entry, error in zip(request.entries, errors)]
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=entries)
