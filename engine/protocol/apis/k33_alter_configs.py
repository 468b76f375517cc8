"""AlterConfigs: v0-2 (the legacy, non-incremental form).

Replaces the resource's whole set of overrides: configs left out revert to their defaults,
as in Kafka. Each resource changes all or nothing. Topic resources: bad names or values are
INVALID_CONFIG. Broker resources ("<id>" or "" for the cluster-wide default) follow Kafka's
DynamicBrokerConfig (engine/dynamic_config.py): custom names are kept; configs Kafka cannot
change at run time and bad values are INVALID_REQUEST with Kafka's message. The internal topics
must stay compacted, so a request for one of them that leaves `cleanup.policy=compact` out
(resetting it to the broker default) is INVALID_CONFIG (engine/cluster/internal_topics.py).
Each resource is its own metadata commit; they run in slices of the event loop
(engine/cluster/slices.py), so a request of thousands never holds the other connections.
Authorization (as KafkaApis): ALTER_CONFIGS on the topic (TOPIC_AUTHORIZATION_FAILED) or, for a
broker, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""
from kafka.protocol.admin import AlterConfigsRequest, AlterConfigsResponse

from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol import configs
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER_CONFIGS

Result = AlterConfigsResponse.AlterConfigsResourceResponse


@api(AlterConfigsRequest, AlterConfigsResponse, versions=(0, 2))
async def handle_alter_configs(ctx, request: AlterConfigsRequest) -> AlterConfigsResponse:
    responses = await slices.map_sliced(request.resources, lambda r: _alter(ctx, r, request.validate_only))
    return AlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _alter(ctx, resource, validate_only: bool):
    kind, name = resource.resource_type, resource.resource_name
    try:
        authorize.require_config_resource(ctx, ALTER_CONFIGS, kind, name)
        wanted = {c.name: c.value for c in resource.configs}
        changes = {key: None for key in configs.current_overrides(ctx.broker, kind, name) if key not in wanted}
        changes.update(wanted)
        configs.alter(ctx.broker, kind, name, changes, validate_only)
    except ApiError as exc:
        return Result(error_code=exc.code, error_message=exc.message, resource_type=kind, resource_name=name)
    return Result(error_code=0, error_message=None, resource_type=kind, resource_name=name)
