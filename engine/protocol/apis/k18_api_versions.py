"""ApiVersions: v0-4.

Answers from the registry, so the advertised ranges are exactly the handlers we have.
The ranges follow Apache Kafka 4.0, because clients read more than a list of APIs into
them: kafka-python infers the broker release from them (and turns features such as
idempotence on by that guess), and librdkafka picks Fetch/Produce versions by them.
An unsupported ApiVersions version gets a v0 answer with UNSUPPORTED_VERSION (KIP-511),
handled in dispatch.py because the request cannot be decoded.
Features (KIP-584, v3+): `share.version` is supported (0-1) and finalized at 1, so share
groups (KIP-932) are on, as in Kafka 4.2; the features never change, so their epoch is fixed.
As the schema says, v3 leaves out features whose minimum supported version is 0.
Gaps: no other feature (metadata.version, transaction.version, group.version) is advertised.
"""
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from engine.protocol import registry
from engine.protocol.registry import api

# name -> (min supported, max supported, finalized level)
FEATURES = {"share.version": (0, 1, 1)}
FEATURES_EPOCH = 1


@api(ApiVersionsRequest, ApiVersionsResponse, versions=(0, 4))
async def handle_api_versions(ctx, request: ApiVersionsRequest) -> ApiVersionsResponse:
    keys = [ApiVersionsResponse.ApiVersion(api_key=s.key, min_version=s.min_version, max_version=s.max_version)
            for s in registry.all_apis()]
    if ctx.api_version < 3:
        return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)
    supported = [ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=low, max_version=high)
                 for name, (low, high, _) in FEATURES.items() if low > 0 or ctx.api_version >= 4]
    finalized = [ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
                 for name, (_, _, level) in FEATURES.items()]
    return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0, supported_features=supported,
                               finalized_features_epoch=FEATURES_EPOCH, finalized_features=finalized,
                               zk_migration_ready=False)
