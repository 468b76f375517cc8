"""DeleteAcls: v1-3 (KIP-140; v1 KIP-290 pattern types; Kafka 4.0 dropped v0).

Removes every ACL binding each filter matches (the rules of DescribeAcls' filter: ANY, MATCH,
the `*` wildcard) and lists what each filter removed; all of the request's removals are
journaled in one commit before the answer, a binding matched by several filters once.
- the principal needs ALTER on the cluster, else every filter fails CLUSTER_AUTHORIZATION_FAILED;
- with no authorizer every filter fails SECURITY_DISABLED;
- a filter with an unknown code fails INVALID_REQUEST; the others still apply.
"""
import kafka.errors as Errors
from kafka.protocol.admin import DeleteAclsRequest, DeleteAclsResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER, AclFilter

FilterResult = DeleteAclsResponse.DeleteAclsFilterResult
Matching = FilterResult.DeleteAclsMatchingAcl


@api(DeleteAclsRequest, DeleteAclsResponse, versions=(1, 3))
async def handle_delete_acls(ctx, request: DeleteAclsRequest) -> DeleteAclsResponse:
    if not authorize.authorize_cluster(ctx, ALTER):
        return _all(request, Errors.ClusterAuthorizationFailedError, "Request is not authorized.")
    if not authorize.enabled(ctx):
        return _all(request, Errors.SecurityDisabledError, "No Authorizer is configured.")
    filters = [AclFilter(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter, f.principal_filter,
                         f.host_filter, f.operation, f.permission_type) for f in request.filters]
    results = ctx.controller.delete_acls(filters)
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[_result(r) for r in results])


def _result(result) -> FilterResult:
    if isinstance(result, ApiError):
        return FilterResult(error_code=result.code, error_message=result.message, matching_acls=[])
    return FilterResult(error_code=0, error_message=None, matching_acls=[
        Matching(error_code=0, error_message=None, resource_type=b.resource_type, resource_name=b.resource_name,
                 pattern_type=b.pattern_type, principal=b.principal, host=b.host, operation=b.operation,
                 permission_type=b.permission_type) for b in result])


def _all(request, error, message: str) -> DeleteAclsResponse:
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        FilterResult(error_code=error.errno, error_message=message, matching_acls=[]) for _ in request.filters])
