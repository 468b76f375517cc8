"""DescribeConfigs: v1-4.

Topic (2) and broker (4) resources, every config with its effective value and Kafka's
config source: DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG (set for this broker),
DYNAMIC_DEFAULT_BROKER_CONFIG (set cluster-wide), STATIC_BROKER_CONFIG, DEFAULT_CONFIG.
A topic's defaults are those of the broker that answers, as in Kafka. Broker configs that
cannot change at run time are read-only (Kafka's DynamicBrokerConfig, engine/dynamic_config.py).
The cluster-wide resource (broker "") lists only what was set on it. Stored broker configs
the engine has no definition for are listed too; passwords and custom (untyped) configs are
sensitive, their values withheld, as Kafka does. `configuration_keys` filters; v3+ carries config types.
A broker's own resource also carries two read-only entries of this engine's:
`engine.admin.endpoint` and `engine.log.cleaner.uncleanable.partitions` (the partitions its
log cleaner marked uncleanable, "topic-partition" comma-separated; Kafka counts them only in
the JMX gauge uncleanable-partitions-count).
Resources are described in slices of the event loop (engine/cluster/slices.py), and an answer
of thousands of entries is encoded off it (engine/protocol/big_requests.py).
include_synonyms (v1+) lists, per config, where else a value could come from, highest
precedence first: the topic override, the broker's synonyms layer by layer, Kafka's default.
include_documentation (v3+) gives each config its one-line description
(kafka_rules/config_docs.py); stored configs the engine does not define have none.
Gaps: Kafka drops a topic config's broker synonyms when its first one is unset (`retention.ms`
lists no `log.retention.hours`); we list them all.
Authorization (as Kafka's ConfigHelper): DESCRIBE_CONFIGS on the topic (TOPIC_AUTHORIZATION_FAILED)
or, for a broker, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""
from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse

from engine.cluster import slices
from engine.config import SOURCE_DEFAULT
from engine.errors import ApiError
from engine.protocol import configs
from engine.protocol.dispatch import EncodeOffLoop
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE_CONFIGS
from kafka_rules.config_docs import broker_config_doc, group_config_doc, topic_config_doc

Result = DescribeConfigsResponse.DescribeConfigsResult
Entry = Result.DescribeConfigsResourceResult
Synonym = Entry.DescribeConfigsSynonym
ENCODE_OFF_LOOP_ENTRIES = 5000


@api(DescribeConfigsRequest, DescribeConfigsResponse, versions=(1, 4))
async def handle_describe_configs(ctx, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    documented = ctx.api_version >= 3 and request.include_documentation
    results = await slices.map_sliced(request.resources,
                                      lambda r: _describe(ctx, r, request.include_synonyms, documented))
    response = DescribeConfigsResponse(throttle_time_ms=0, results=results)
    # ~40 configs a topic: a few hundred resources make an answer worth encoding off the loop.
    return EncodeOffLoop(response) if sum(len(r.configs) for r in results) > ENCODE_OFF_LOOP_ENTRIES else response


_DOCS = {configs.TOPIC: topic_config_doc, configs.BROKER: broker_config_doc, configs.GROUP: group_config_doc}


def _describe(ctx, resource, include_synonyms: bool, documented: bool):
    try:
        authorize.require_config_resource(ctx, DESCRIBE_CONFIGS, resource.resource_type, resource.resource_name)
        entries = configs.describe(ctx.broker, resource.resource_type, resource.resource_name)
    except ApiError as exc:
        return Result(error_code=exc.code, error_message=exc.message, resource_type=resource.resource_type,
                      resource_name=resource.resource_name, configs=[])
    wanted = set(resource.configuration_keys) if resource.configuration_keys else None
    doc_of = _DOCS.get(resource.resource_type) if documented else None
    out = [Entry(name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                 is_default=e.source == SOURCE_DEFAULT, is_sensitive=e.sensitive,
                 synonyms=[Synonym(name=n, value=v, source=s) for n, v, s in e.synonyms] if include_synonyms else [],
                 config_type=e.type, documentation=doc_of(e.name) if doc_of else None)
           for e in entries if wanted is None or e.name in wanted]
    return Result(error_code=0, error_message=None, resource_type=resource.resource_type,
                  resource_name=resource.resource_name, configs=out)
