"""ACL calls (KIP-140): DescribeAcls (k29), CreateAcls (k30) and DeleteAcls (k31), v1-3.

Use them through a gateway: `with open_gateway(settings) as gw: gw.acls.describe()`.

Bindings and filters are `kafka_rules.acls.AclBinding` / `AclFilter`: Kafka's model, with
Kafka's codes, and no I/O (the console shares the rules, not the engine). Each request goes
to any broker, as Kafka's admin client sends it. A cluster without an authorizer answers
SECURITY_DISABLED; a principal without DESCRIBE (ALTER to change) on the cluster
CLUSTER_AUTHORIZATION_FAILED: both raise GatewayError (NotAuthorized for the second) with
Kafka's code.
"""
from __future__ import annotations

from collections.abc import Iterable

from kafka.protocol.admin import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest

from console.kafka_gateway.errors import GatewayError, error_for_code, translated
from console.kafka_gateway.wire import send
from kafka_rules.acls import AclBinding, AclFilter

ANY_ACL = AclFilter()


class AclCalls:
    """The ACL calls of one gateway (see the module docstring)."""

    def __init__(self, gateway) -> None:
        self._manager = gateway._admin._manager

    @translated
    def describe(self, acl_filter: AclFilter = ANY_ACL) -> list[AclBinding]:
        """Every binding the filter matches, in the order the cluster lists them."""
        answer = self._send(DescribeAclsRequest(
            resource_type_filter=acl_filter.resource_type, resource_name_filter=acl_filter.resource_name,
            pattern_type_filter=acl_filter.pattern_type, principal_filter=acl_filter.principal,
            host_filter=acl_filter.host, operation=acl_filter.operation,
            permission_type=acl_filter.permission_type))
        if answer.error_code:
            raise error_for_code(answer.error_code, answer.error_message)
        return [AclBinding(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
                           a.permission_type) for r in answer.resources for a in r.acls]

    @translated
    def create(self, bindings: Iterable[AclBinding]) -> list[GatewayError | None]:
        """One result per binding, in order: None (created, or there already) or the refusal."""
        creation = CreateAclsRequest.AclCreation
        bindings = list(bindings)
        answer = self._send(CreateAclsRequest(creations=[
            creation(resource_type=b.resource_type, resource_name=b.resource_name,
                     resource_pattern_type=b.pattern_type, principal=b.principal, host=b.host, operation=b.operation,
                     permission_type=b.permission_type) for b in bindings]))
        return [error_for_code(r.error_code, r.error_message) if r.error_code else None for r in answer.results]

    @translated
    def delete(self, filters: Iterable[AclFilter]) -> list[list[AclBinding] | GatewayError]:
        """Per filter, in order: the bindings it removed, or its refusal."""
        entry = DeleteAclsRequest.DeleteAclsFilter
        answer = self._send(DeleteAclsRequest(filters=[
            entry(resource_type_filter=f.resource_type, resource_name_filter=f.resource_name,
                  pattern_type_filter=f.pattern_type, principal_filter=f.principal, host_filter=f.host,
                  operation=f.operation, permission_type=f.permission_type) for f in filters]))
        return [error_for_code(r.error_code, r.error_message) if r.error_code else
                [AclBinding(a.resource_type, a.resource_name, a.pattern_type, a.principal, a.host, a.operation,
                            a.permission_type) for a in r.matching_acls]
                for r in answer.filter_results]

    def _send(self, request):
        return self._manager.run(send, self._manager, request)
