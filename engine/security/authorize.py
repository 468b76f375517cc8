"""The handlers' one door to the authorizer, in the shape of Kafka's AuthHelper.

Each API handler asks with one call, e.g. `authorize_topics(ctx, WRITE, names)` or
`authorize_cluster(ctx, ALTER)`; with no authorizer configured every answer is yes and
`authorized_operations` lists every supported operation, as Kafka answers without one.

Hot path: Produce and Fetch ask on every request, so a connection keeps its answers by
(operation, resource type, name) in its ConnectionIdentity (engine/security/principal.py);
the principal and host of a connection never change, so the answers stay right until the
ACLs do, and the whole cache is dropped when the ACL index's version moves. A connection
naming many resources keeps at most _MAX_DECISIONS answers (then starts afresh).
"""
from __future__ import annotations

from typing import Iterable

import kafka.errors as Errors

from engine.errors import ApiError
from kafka_rules.acls import CLUSTER, CLUSTER_NAME, GROUP, SUPPORTED_OPERATIONS, TOPIC, TRANSACTIONAL_ID

_MAX_DECISIONS = 4096


def enabled(ctx) -> bool:
    return _authorizer(ctx) is not None


def authorize(ctx, operation: int, resource_type: int, name: str) -> bool:
    authorizer = _authorizer(ctx)
    if authorizer is None:
        return True
    identity = ctx.identity
    if identity is None:       # a context built outside a listener (tests): nothing to keep answers in
        return authorizer.authorize(ctx.kafka_principal, ctx.client_host, operation, resource_type, name)
    version = authorizer.acls.version
    decisions = identity.decisions
    if identity.decisions_version != version or len(decisions) > _MAX_DECISIONS:
        decisions.clear()
        identity.decisions_version = version
    key = (operation, resource_type, name)
    answer = decisions.get(key)
    if answer is None:
        answer = decisions[key] = authorizer.authorize(identity.principal, ctx.client_host, operation,
                                                       resource_type, name)
    return answer


def authorize_cluster(ctx, operation: int) -> bool:
    return authorize(ctx, operation, CLUSTER, CLUSTER_NAME)


def authorize_topic(ctx, operation: int, name: str) -> bool:
    return authorize(ctx, operation, TOPIC, name)


def authorize_topics(ctx, operation: int, names: Iterable[str]) -> set[str]:
    """The names among `names` the principal may perform `operation` on."""
    if _authorizer(ctx) is None:
        return set(names)
    return {name for name in set(names) if authorize(ctx, operation, TOPIC, name)}


def authorize_group(ctx, operation: int, group_id: str) -> bool:
    return authorize(ctx, operation, GROUP, group_id)


def authorize_transactional_id(ctx, operation: int, transactional_id: str) -> bool:
    return authorize(ctx, operation, TRANSACTIONAL_ID, transactional_id)


def authorize_by_resource_type(ctx, operation: int, resource_type: int) -> bool:
    """May the principal perform `operation` on at least one resource of the type."""
    authorizer = _authorizer(ctx)
    if authorizer is None:
        return True
    return authorizer.authorize_by_resource_type(ctx.kafka_principal, ctx.client_host, operation, resource_type)


def authorized_operations(ctx, resource_type: int, name: str) -> set[int]:
    """KIP-430's `authorized_operations`: the resource type's supported operations that the
    principal may perform (all of them with no authorizer)."""
    if _authorizer(ctx) is None:
        return set(SUPPORTED_OPERATIONS[resource_type])
    return {op for op in SUPPORTED_OPERATIONS[resource_type] if authorize(ctx, op, resource_type, name)}


# --- the same, raising Kafka's error (for handlers whose refusals are ApiErrors) -----------

def require_cluster(ctx, operation: int) -> None:
    if not authorize_cluster(ctx, operation):
        raise ApiError(Errors.ClusterAuthorizationFailedError)


def require_group(ctx, operation: int, group_id: str) -> None:
    if not authorize_group(ctx, operation, group_id):
        raise ApiError(Errors.GroupAuthorizationFailedError)


def require_transactional_id(ctx, operation: int, transactional_id: str) -> None:
    if not authorize_transactional_id(ctx, operation, transactional_id):
        raise ApiError(Errors.TransactionalIdAuthorizationFailedError)


CONFIG_TOPIC, CONFIG_GROUP = 2, 32     # ConfigResource types (DescribeConfigs, AlterConfigs)


def require_config_resource(ctx, operation: int, config_resource_type: int, name: str) -> None:
    """DescribeConfigs and (Incremental)AlterConfigs, as Kafka's ConfigHelper: a topic resource
    needs the operation on the topic, a group resource on the group, a broker (or broker
    logger) resource on the cluster, each refused with its own error."""
    if config_resource_type == CONFIG_TOPIC:
        if not authorize_topic(ctx, operation, name):
            raise ApiError(Errors.TopicAuthorizationFailedError)
    elif config_resource_type == CONFIG_GROUP:
        require_group(ctx, operation, name)
    else:
        require_cluster(ctx, operation)


def _authorizer(ctx):
    return getattr(ctx.broker, "authorizer", None)
