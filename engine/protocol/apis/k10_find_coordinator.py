"""FindCoordinator: v0-6.

- Group keys (key type 0): the coordinator is the leader of partition
  `abs(hashCode(group)) % partitions` of `__consumer_offsets`. The first lookup creates
  `__consumer_offsets` (offsets.topic.num.partitions, offsets.topic.replication.factor capped
  at the live brokers, cleanup.policy=compact, offsets.topic.segment.bytes), as Kafka does.
- Transaction keys (key type 1): the leader of partition `abs(hashCode(id)) % partitions` of
  `__transaction_state`, created on the first lookup (transaction.state.log.num.partitions,
  transaction.state.log.replication.factor capped at the live brokers, compacted).
- Share keys (key type 2, KIP-932, v6): "group:topicId:partition", the share coordinator
  of a share partition: the leader of partition `abs(hashCode(key)) % partitions` of
  `__share_group_state`, created on the first lookup (share.coordinator.state.topic.*). A key
  of another shape is INVALID_REQUEST.
- v4+ answers a batch of keys (KIP-699); v0-3 one key, in the top-level fields.
- COORDINATOR_NOT_AVAILABLE when the partition has no live leader (clients retry).
- The coordinator's endpoint is the one of the listener the request came through.
- Authorization: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or on the transactional
  id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), checked before anything is created. Share keys
  are the brokers' own lookups and need CLUSTER_ACTION on the cluster
  (CLUSTER_AUTHORIZATION_FAILED), as KafkaApis; share consumers find their group coordinator
  with group keys.
"""
import re

import kafka.errors as Errors
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION, DESCRIBE

GROUP, TRANSACTION, SHARE = 0, 1, 2
SHARE_KEY = re.compile(r"^.+:[A-Za-z0-9_-]{22}:\d+$")


@api(FindCoordinatorRequest, FindCoordinatorResponse, versions=(0, 6))
async def handle_find_coordinator(ctx, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    key_type = request.key_type if ctx.api_version >= 1 else GROUP
    if ctx.api_version >= 4:
        found = [(key, *_find(ctx, key_type, key)) for key in request.coordinator_keys]
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=[
            FindCoordinatorResponse.Coordinator(key=key, node_id=node, host=host, port=port, error_code=error,
                                                error_message=message)
            for key, node, host, port, error, message in found])
    node, host, port, error, message = _find(ctx, key_type, request.key)
    return FindCoordinatorResponse(throttle_time_ms=0, error_code=error, error_message=message, node_id=node,
                                   host=host, port=port)


def _find(ctx, key_type: int, key: str | None) -> tuple[int, str, int, int, str | None]:
    """(node id, host, port, error code, error message)."""
    if key_type == TRANSACTION:
        if not key:
            return _error(Errors.InvalidRequestError, "Empty transactional id")
        if not authorize.authorize_transactional_id(ctx, DESCRIBE, key):
            return _error(Errors.TransactionalIdAuthorizationFailedError)
        coordinator = ctx.broker.txn_coordinator
        ready = coordinator.ensure_topic()
    elif key_type == SHARE:
        if not authorize.authorize_cluster(ctx, CLUSTER_ACTION):
            return _error(Errors.ClusterAuthorizationFailedError)
        if not key or not SHARE_KEY.match(key):
            return _error(Errors.InvalidRequestError, f"Invalid share coordinator key {key!r}")
        coordinator = ctx.broker.share_coordinator
        ready = coordinator.ensure_topic()
    elif key_type == GROUP:
        if not key:
            return _error(Errors.InvalidGroupIdError)
        if not authorize.authorize_group(ctx, DESCRIBE, key):
            return _error(Errors.GroupAuthorizationFailedError)
        coordinator = ctx.coordinator
        ready = coordinator.ensure_offsets_topic()
    else:
        return _error(Errors.InvalidRequestError, f"Unsupported coordinator key type {key_type}")
    if not ready:
        return _error(Errors.CoordinatorNotAvailableError)
    node_id = coordinator.coordinator_for(key)
    node = ctx.broker.image.brokers.get(node_id) if node_id is not None else None
    endpoint = node.endpoint(ctx.listener_name) if node is not None else None
    if endpoint is None or node_id not in ctx.controller.live_brokers():
        return _error(Errors.CoordinatorNotAvailableError)
    return node.node_id, endpoint[0], endpoint[1], 0, None


def _error(error, message: str | None = None):
    return -1, "", -1, error.errno, message or error.description
