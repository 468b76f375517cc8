"""ApiVersions: v0-4.

Answers from the registry, so the advertised ranges are exactly the handlers we have.
The ranges follow Apache Kafka 4.0, because clients read more than a list of APIs into
them: kafka-python infers the broker release from them (and turns features such as
idempotence on by that guess), and librdkafka picks Fetch/Produce versions by them.
An unsupported ApiVersions version gets a v0 answer with UNSUPPORTED_VERSION (KIP-511),
handled in dispatch.py because the request cannot be decoded.
Gaps: no features (KIP-584) are advertised.
"""
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from engine.protocol import registry
from engine.protocol.registry import api


@api(ApiVersionsRequest, ApiVersionsResponse, versions=(0, 4))
async def handle_api_versions(ctx, request: ApiVersionsRequest) -> ApiVersionsResponse:
    keys = [ApiVersionsResponse.ApiVersion(api_key=s.key, min_version=s.min_version, max_version=s.max_version)
            for s in registry.all_apis()]
    return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)
