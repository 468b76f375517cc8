"""IncrementalAlterConfigs: v0-1 (KIP-339).

SET, DELETE (revert to default), APPEND and SUBTRACT (list configs only; they start from the
override, else from the config's own default) on topic and broker resources. Each resource
changes all or nothing; validate_only changes nothing. Errors as Kafka: a key twice is
INVALID_REQUEST; APPEND/SUBTRACT on a non-list config and bad topic configs are INVALID_CONFIG.
Broker resources follow Kafka's DynamicBrokerConfig (engine/dynamic_config.py): Kafka's run-time
names and custom names are stored; names fixed at start, SSL stores without a listener prefix,
per-broker configs on the cluster-wide resource and bad values are INVALID_REQUEST with Kafka's
message. Deleting any name is allowed. The internal topics must stay compacted: a change whose
effective cleanup.policy is not `compact` is INVALID_CONFIG (engine/cluster/internal_topics.py).
Each resource is its own metadata commit; they run in slices of the event loop
(engine/cluster/slices.py), so a request of thousands never holds the other connections.
Authorization (as KafkaApis): ALTER_CONFIGS on the topic (TOPIC_AUTHORIZATION_FAILED) or, for a
broker, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""
from kafka.protocol.admin import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse

from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol import configs
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER_CONFIGS

Result = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


@api(IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, versions=(0, 1))
async def handle_incremental_alter_configs(ctx, request):
    responses = await slices.map_sliced(request.resources, lambda r: _alter(ctx, r, request.validate_only))
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _alter(ctx, resource, validate_only: bool):
    kind, name = resource.resource_type, resource.resource_name
    try:
        authorize.require_config_resource(ctx, ALTER_CONFIGS, kind, name)
        current = configs.current_overrides(ctx.broker, kind, name)
        operations = [(c.name, c.config_operation, c.value) for c in resource.configs]
        changes = configs.apply_incremental(current, operations, configs.definitions_for(kind))
        configs.alter(ctx.broker, kind, name, changes, validate_only)
    except ApiError as exc:
        return Result(error_code=exc.code, error_message=exc.message, resource_type=kind, resource_name=name)
    return Result(error_code=0, error_message=None, resource_type=kind, resource_name=name)
