"""The handlers' one door to the authorizer, in the shape of Kafka's AuthHelper.

Each API handler asks with one call, e.g. `authorize_topics(ctx, WRITE, names)` or
`authorize_cluster(ctx, ALTER)`; with no authorizer configured every answer is yes and
`authorized_operations` lists every supported operation, as Kafka answers without one.

Hot path: Produce and Fetch ask on every request, so a connection keeps its answers by
(operation, resource type, name) in its ConnectionIdentity (engine/security/principal.py);
the principal and host of a connection never change, so the answers stay right until the
ACLs do, and the whole cache is dropped when the ACL index's version moves. A connection
naming many resources keeps at most _MAX_DECISIONS answers (then starts afresh).

The audit log is Kafka's `kafka.authorizer.logger`, here the logger `engine.authorizer`: a
denial of something a request asked for is logged at INFO, an access granted at DEBUG, each in
Kafka's words ("Principal = User:alice is Denied operation = WRITE from host = 127.0.0.1 on
resource = Topic:LITERAL:orders for request = Produce with resourceRefCount = 1"). Checks that
only filter or describe (the topics a Metadata request for every topic may see, the
operations KIP-430 lists, CreateTopics' cluster check before its topic checks) are not logged,
as Kafka logs them at TRACE only. Each line ends, as Kafka's, with the rule that decided:
"based on rule MatchingAcl(acl=StandardAcl(...))" for a binding, or SuperUser, DefaultAllow
(no ACL on the resource, `allow.everyone.if.no.acl.found`) or DefaultDeny.
"""
from __future__ import annotations

import logging
from typing import Iterable

import kafka.errors as Errors

from engine.errors import ApiError
from kafka_rules.acls import CLUSTER, CLUSTER_NAME, DESCRIBE, GROUP, OPERATIONS, SUPPORTED_OPERATIONS, TOPIC, TRANSACTIONAL_ID
from kafka_rules.authorizer import rule_text

_MAX_DECISIONS = 4096
audit_log = logging.getLogger("engine.authorizer")
# Resource type names as Kafka's SecurityUtils.resourceTypeName writes them in the audit log.
_RESOURCE_NAMES = {TOPIC: "Topic", GROUP: "Group", CLUSTER: "Cluster", TRANSACTIONAL_ID: "TransactionalId"}


def enabled(ctx) -> bool:
    return _authorizer(ctx) is not None


def authorize(ctx, operation: int, resource_type: int, name: str, *, audited: bool = True) -> bool:
    """May the connection's principal perform `operation` on the resource; `audited=False` for
    checks that only filter or describe (not written to the audit log)."""
    authorizer = _authorizer(ctx)
    if authorizer is None:
        return True
    allowed, rule = _decision(ctx, authorizer, operation, resource_type, name)
    if audited:
        _audit(ctx, operation, resource_type, name, allowed, rule)
    return allowed


def _decision(ctx, authorizer, operation: int, resource_type: int, name: str):
    """(allowed, the rule that decided), kept on the connection."""
    identity = ctx.identity
    if identity is None:       # a context built outside a listener (tests): nothing to keep answers in
        return authorizer.decide(ctx.kafka_principal, ctx.client_host, operation, resource_type, name)
    version = authorizer.acls.version
    decisions = identity.decisions
    if identity.decisions_version != version or len(decisions) > _MAX_DECISIONS:
        decisions.clear()
        identity.decisions_version = version
    key = (operation, resource_type, name)
    decision = decisions.get(key)
    if decision is None:
        decision = decisions[key] = authorizer.decide(identity.principal, ctx.client_host, operation,
                                                      resource_type, name)
    return decision


def _audit(ctx, operation: int, resource_type: int, name: str, allowed: bool, rule) -> None:
    level = logging.DEBUG if allowed else logging.INFO
    if audit_log.isEnabledFor(level):
        audit_log.log(level, "Principal = %s is %s operation = %s from host = %s on resource = %s:LITERAL:%s "
                             "for request = %s with resourceRefCount = 1 based on rule %s", ctx.kafka_principal,
                      "Allowed" if allowed else "Denied", OPERATIONS.get(operation, operation), ctx.client_host,
                      _RESOURCE_NAMES.get(resource_type, resource_type), name, ctx.api_name, rule_text(rule))


def authorize_cluster(ctx, operation: int, *, audited: bool = True) -> bool:
    return authorize(ctx, operation, CLUSTER, CLUSTER_NAME, audited=audited)


def authorize_topic(ctx, operation: int, name: str) -> bool:
    return authorize(ctx, operation, TOPIC, name)


def authorize_topics(ctx, operation: int, names: Iterable[str], *, audited: bool = True) -> set[str]:
    """The names among `names` the principal may perform `operation` on."""
    if _authorizer(ctx) is None:
        return set(names)
    return {name for name in set(names) if authorize(ctx, operation, TOPIC, name, audited=audited)}


# ConsumerGroupDescribe's and ShareGroupDescribe's message when `may_describe_all` refuses (KafkaApis's).
GROUP_TOPICS_REFUSED = "The described group uses topics that the client is not authorized to describe."


def may_describe_all(ctx, topics: Iterable[str]) -> bool:
    """DESCRIBE on every one of `topics` (ConsumerGroupDescribe's and ShareGroupDescribe's check
    on the topics a group uses, as KafkaApis)."""
    topics = set(topics)
    return len(authorize_topics(ctx, DESCRIBE, topics)) == len(topics)


def describable_topics(ctx):
    """A filter for the topics a consumer group member's regex matches: those among them the
    connection's principal may DESCRIBE (not audited: a filter, as in Kafka); None with no
    authorizer. It asks the authorizer itself, so the group may keep it past the request."""
    authorizer = _authorizer(ctx)
    if authorizer is None:
        return None
    principal, host = ctx.kafka_principal, ctx.client_host

    def describable(topics: frozenset[str]) -> frozenset[str]:
        return frozenset(t for t in topics if authorizer.authorize(principal, host, DESCRIBE, TOPIC, t))
    return describable


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
    return {op for op in SUPPORTED_OPERATIONS[resource_type] if authorize(ctx, op, resource_type, name, audited=False)}


# --- the same, raising Kafka's error (for handlers whose refusals are ApiErrors) -----------

def require_cluster(ctx, operation: int) -> None:
    if not authorize_cluster(ctx, operation):
        raise ApiError(Errors.ClusterAuthorizationFailedError)


def require_group(ctx, operation: int, group_id: str) -> None:
    if not authorize_group(ctx, operation, group_id):
        raise ApiError(Errors.GroupAuthorizationFailedError)


def require_subscribed_topics(ctx, names) -> None:
    """ConsumerGroupHeartbeat's and ShareGroupHeartbeat's check, as KafkaApis: DESCRIBE on every
    topic a member subscribes to by name, else TOPIC_AUTHORIZATION_FAILED naming those refused."""
    subscribed = set(names or ())
    refused = subscribed - authorize_topics(ctx, DESCRIBE, subscribed)
    if refused:
        raise ApiError(Errors.TopicAuthorizationFailedError,
                       f"Not authorized to describe the subscribed topics: {', '.join(sorted(refused))}")


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
