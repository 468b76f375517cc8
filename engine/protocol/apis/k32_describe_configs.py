"""DescribeConfigs: v1-4.

Topic (2) and broker (4) resources, every config with its effective value and Kafka's
config source (DYNAMIC_TOPIC_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG,
DEFAULT_CONFIG). `configuration_keys` filters; v3+ carries config types.
Gaps: synonyms are not listed; no documentation strings.
"""
from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse

from engine.errors import ApiError
from engine.protocol import configs
from engine.protocol.registry import api

Result = DescribeConfigsResponse.DescribeConfigsResult
Entry = Result.DescribeConfigsResourceResult


@api(DescribeConfigsRequest, DescribeConfigsResponse, versions=(1, 4))
async def handle_describe_configs(ctx, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    return DescribeConfigsResponse(throttle_time_ms=0, results=[_describe(ctx, r) for r in request.resources])


def _describe(ctx, resource):
    try:
        entries = configs.describe(ctx.broker, resource.resource_type, resource.resource_name)
    except ApiError as exc:
        return Result(error_code=exc.code, error_message=exc.message, resource_type=resource.resource_type,
                      resource_name=resource.resource_name, configs=[])
    wanted = set(resource.configuration_keys) if resource.configuration_keys else None
    out = [Entry(name=name, value=value, read_only=read_only, config_source=source, is_default=source == 5,
                 is_sensitive=False, synonyms=[], config_type=config_type, documentation=None)
           for name, value, source, read_only, config_type in entries if wanted is None or name in wanted]
    return Result(error_code=0, error_message=None, resource_type=resource.resource_type,
                  resource_name=resource.resource_name, configs=out)
