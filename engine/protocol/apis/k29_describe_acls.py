"""DescribeAcls: v1-3 (KIP-140; v1 KIP-290 pattern types; Kafka 4.0 dropped v0).

Lists the ACL bindings one filter matches, grouped by resource pattern, as Kafka's AclApis:
- the principal needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED;
- with no authorizer (`authorizer.class.name` unset) the answer is SECURITY_DISABLED;
- a filter with an unknown resource type, pattern type, operation or permission type is
  INVALID_REQUEST (kafka_rules/acls.py has the matching rules: ANY, MATCH, the `*` wildcard).
The answer for every ACL is encoded once per metadata image (engine/protocol/response_cache.py):
consoles ask for it on each page load, and 10,000 bindings cost ~0.2 s to encode.
"""
import kafka.errors as Errors
from kafka.protocol.admin import DescribeAclsRequest, DescribeAclsResponse

from engine.cluster import acl_records
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE, AclFilter, InvalidAcl, validate_filter

Resource = DescribeAclsResponse.DescribeAclsResource
EVERYTHING = AclFilter()
Description = Resource.AclDescription


@api(DescribeAclsRequest, DescribeAclsResponse, versions=(1, 3))
async def handle_describe_acls(ctx, request: DescribeAclsRequest) -> DescribeAclsResponse:
    if not authorize.authorize_cluster(ctx, DESCRIBE):
        return _error(Errors.ClusterAuthorizationFailedError, "Request is not authorized.")
    if not authorize.enabled(ctx):
        return _error(Errors.SecurityDisabledError, "No Authorizer is configured on the broker")
    acl_filter = AclFilter(request.resource_type_filter, request.resource_name_filter, request.pattern_type_filter,
                           request.principal_filter, request.host_filter, request.operation, request.permission_type)
    try:
        validate_filter(acl_filter)
    except InvalidAcl as exc:
        return _error(Errors.InvalidRequestError, str(exc))
    image = ctx.broker.image
    if acl_filter != EVERYTHING:      # a narrow answer: cheap, and not worth a cached entry
        return _response(acl_records.describe(image.acls, acl_filter))
    # Consoles list every ACL on each page load: that answer is encoded once per image.
    return ctx.broker.response_cache.get(image, "describe_acls", ctx.api_version,
                                         lambda: _response(acl_records.describe(image.acls, acl_filter)))


def _response(bindings) -> DescribeAclsResponse:
    return DescribeAclsResponse(throttle_time_ms=0, error_code=0, error_message=None, resources=_grouped(bindings))


def _grouped(bindings) -> list:
    resources: dict[tuple, list] = {}
    for b in bindings:
        resources.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            Description(principal=b.principal, host=b.host, operation=b.operation, permission_type=b.permission_type))
    return [Resource(resource_type=kind, resource_name=name, pattern_type=pattern, acls=acls)
            for (kind, name, pattern), acls in resources.items()]


def _error(error, message: str) -> DescribeAclsResponse:
    return DescribeAclsResponse(throttle_time_ms=0, error_code=error.errno, error_message=message, resources=[])
