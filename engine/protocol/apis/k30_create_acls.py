"""CreateAcls: v1-3 (KIP-140; v1 KIP-290 pattern types; Kafka 4.0 dropped v0).

Adds ACL bindings, durable in the metadata journal before the answer (engine/cluster/acl_records.py)
and in force at once on every broker. One result per creation, in order:
- the principal needs ALTER on the cluster, else every result is CLUSTER_AUTHORIZATION_FAILED;
- with no authorizer every result is SECURITY_DISABLED;
- a binding Kafka would refuse is INVALID_REQUEST with Kafka's message (an unknown or ANY
  resource type, pattern type MATCH or ANY, operation or permission type ANY or unknown, an
  empty name, a CLUSTER resource not named kafka-cluster, a principal without `Type:`, a
  DENY of a USER resource that is not one literal user);
- a binding that exists already is a success, and is not stored twice.
"""
import kafka.errors as Errors
from kafka.protocol.admin import CreateAclsRequest, CreateAclsResponse

from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER, AclBinding

Result = CreateAclsResponse.AclCreationResult


@api(CreateAclsRequest, CreateAclsResponse, versions=(1, 3))
async def handle_create_acls(ctx, request: CreateAclsRequest) -> CreateAclsResponse:
    if not authorize.authorize_cluster(ctx, ALTER):
        return _all(request, Errors.ClusterAuthorizationFailedError, "Request is not authorized.")
    if not authorize.enabled(ctx):
        return _all(request, Errors.SecurityDisabledError, "No Authorizer is configured.")
    bindings = [AclBinding(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host,
                           c.operation, c.permission_type) for c in request.creations]
    results = ctx.controller.create_acls(bindings)
    return CreateAclsResponse(throttle_time_ms=0, results=[
        Result(error_code=0, error_message=None) if error is None else
        Result(error_code=error.code, error_message=error.message) for error in results])


def _all(request, error, message: str) -> CreateAclsResponse:
    return CreateAclsResponse(throttle_time_ms=0, results=[Result(error_code=error.errno, error_message=message)
                                                           for _ in request.creations])
