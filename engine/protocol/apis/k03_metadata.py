"""Metadata: v0-12.

Every broker answers from the metadata image, so clients can bootstrap from any broker.
- topics=None (v1+) lists all topics; an empty list lists none.
- Unknown topics are created when the request allows it (v4+) and the broker's
  `auto.create.topics.enable` is true, with `num.partitions` and `default.replication.factor`;
  the response then says LEADER_NOT_AVAILABLE for them, as Kafka does, and clients retry.
- v10+ carries topic ids; a request by topic id (v10+) is answered by id.
- Illegal names get INVALID_TOPIC_EXCEPTION.
- The all-topics answer is encoded once per metadata image, live broker set and version and
  then reused (see response_cache.py): at 20,000 partitions building it takes ~0.2 s. While
  someone polls it, the engine builds the next image's answer right after a change
  (runtime.py), before their next request.
- Brokers are listed with their endpoints on the listener the request came through, as
  Kafka does (engine/security/listeners.py).
- A request naming many topics is answered in slices of the event loop (engine/cluster/slices.py),
  and decoded and encoded off it (engine/protocol/big_requests.py): other connections are
  served meanwhile. Each topic is looked up in the image current at its turn.
- Authorization (with an authorizer, as KafkaApis): topics the principal may not DESCRIBE
  are left out of the all-topics answer and answered TOPIC_AUTHORIZATION_FAILED when named
  (with no topic id, so nothing leaks; by id, the id is given back); creating a missing topic
  needs CREATE on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED.
- Authorized operations (v8+): include_topic_authorized_operations answers the topic
  operations the principal may perform (Kafka's 8 with no authorizer), and v8-10's
  include_cluster_authorized_operations the cluster ones (0 without DESCRIBE on the cluster);
  unasked, the fields say -2147483648 ("not requested").
- The all-topics answer is cached per image, listener and (with an authorizer) principal and
  host; an ACL change is an image change, so it is rebuilt then.
"""
import uuid

import kafka.errors as Errors
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from engine.cluster import slices
from engine.cluster.topics import validate_topic_name
from engine.cluster.internal_topics import INTERNAL_TOPICS, OFFSETS_TOPIC, TXN_TOPIC
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import CLUSTER, CREATE, DESCRIBE, TOPIC

R = MetadataResponse
ZERO_UUID = uuid.UUID(int=0)
NOT_AUTHORIZED = Errors.TopicAuthorizationFailedError.errno


@api(MetadataRequest, MetadataResponse, versions=(0, 12))
async def handle_metadata(ctx, request: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    image = broker.image
    live = broker.controller.live_brokers()
    topic_ops = ctx.api_version >= 8 and request.include_topic_authorized_operations
    cluster_ops = 8 <= ctx.api_version <= 10 and request.include_cluster_authorized_operations
    listener = ctx.listener_name
    if request.topics is None or (ctx.api_version == 0 and not request.topics):
        # With an authorizer the answer is the principal's own; otherwise everyone's is the same.
        viewer = (ctx.kafka_principal, ctx.client_host) if authorize.enabled(ctx) else None

        def recipe(image):
            live = broker.controller.live_brokers()
            key = ("metadata", frozenset(live), listener, viewer, topic_ops, cluster_ops)
            return key, lambda: _all_topics_response(ctx, image, live, topic_ops, cluster_ops)
        key, build = recipe(image)
        return broker.response_cache.get(image, key, ctx.api_version, build,
                                         recipe=(("metadata", key[2:]), recipe))
    allow_create = ctx.api_version < 4 or request.allow_auto_topic_creation

    def answer(entry):
        topic = _requested_topic(ctx, entry, allow_create, live)
        # Kafka answers them for every topic named, found or not, that the principal may describe.
        if topic_ops and topic.error_code not in (NOT_AUTHORIZED, Errors.UnknownTopicIdError.errno):
            topic.authorized_operations = _topic_operations(ctx, topic.name)
        return topic
    topics = await slices.map_sliced(request.topics, answer)
    return _response(ctx, broker.image, live, topics, cluster_ops)


def _all_topics_response(ctx, image, live: set[int], topic_ops: bool, cluster_ops: bool) -> MetadataResponse:
    names = sorted(image.topics)
    if authorize.enabled(ctx):
        visible = authorize.authorize_topics(ctx, DESCRIBE, names, audited=False)     # a filter, as in Kafka
        names = [name for name in names if name in visible]
    topics = [_topic(name, image, live) for name in names]
    for topic in topics:
        topic.authorized_operations = _topic_operations(ctx, topic.name) if topic_ops else None
    return _response(ctx, image, live, topics, cluster_ops)


def _topic_operations(ctx, name: str | None) -> set[int]:
    return authorize.authorized_operations(ctx, TOPIC, name) if name else set()


def _cluster_operations(ctx) -> set[int]:
    if not authorize.authorize_cluster(ctx, DESCRIBE):
        return set()
    return authorize.authorized_operations(ctx, CLUSTER, "kafka-cluster")


def _response(ctx, image, live: set[int], topics: list, cluster_ops: bool) -> MetadataResponse:
    brokers = []
    for b in image.brokers.values():
        endpoint = b.endpoint(ctx.listener_name) if b.node_id in live else None
        if endpoint is not None:       # a broker without this listener is left out, as in Kafka
            brokers.append(R.MetadataResponseBroker(node_id=b.node_id, host=endpoint[0], port=endpoint[1],
                                                    rack=b.rack))
    return MetadataResponse(throttle_time_ms=0, brokers=brokers, cluster_id=image.cluster_id,
                            controller_id=image.controller_id, topics=topics,
                            authorized_operations=_cluster_operations(ctx) if cluster_ops else None)


def _requested_topic(ctx, entry, allow_create: bool, live: set[int]):
    image = ctx.broker.image
    name = entry.name
    if name is None and entry.topic_id not in (None, ZERO_UUID):
        state = image.topics_by_id.get(entry.topic_id)
        if state is None:
            return _error_topic(Errors.UnknownTopicIdError.errno, None, entry.topic_id)
        if not authorize.authorize_topic(ctx, DESCRIBE, state.name):
            return _error_topic(NOT_AUTHORIZED, None, entry.topic_id)     # ids are not secret: Kafka names it
        return _topic(state.name, image, live)
    try:
        validate_topic_name(name)
    except ApiError as exc:
        return _error_topic(exc.code, name)
    if not authorize.authorize_topic(ctx, DESCRIBE, name):
        return _error_topic(NOT_AUTHORIZED, name)          # whether it exists is not said
    if name in image.topics:
        return _topic(name, image, live)
    if allow_create and not (authorize.authorize_cluster(ctx, CREATE) or authorize.authorize_topic(ctx, CREATE, name)):
        if name in INTERNAL_TOPICS or ctx.broker.config.get("auto.create.topics.enable"):
            return _error_topic(NOT_AUTHORIZED, name)
    if name in INTERNAL_TOPICS and allow_create:
        # Internal: created with their own settings (offsets.topic.*, transaction.state.log.*,
        # share.coordinator.state.topic.*), never with num.partitions, as Kafka's
        # AutoTopicCreationManager does.
        if name == OFFSETS_TOPIC:
            ctx.coordinator.ensure_offsets_topic()
        elif name == TXN_TOPIC:
            ctx.broker.txn_coordinator.ensure_topic()
        else:
            ctx.broker.share_coordinator.ensure_topic()
        return _error_topic(Errors.LeaderNotAvailableError.errno, name)
    if allow_create and ctx.broker.config.get("auto.create.topics.enable"):
        try:
            ctx.controller.create_topic(name, -1, -1)
        except ApiError as exc:
            if exc.code != Errors.TopicAlreadyExistsError.errno:
                return _error_topic(exc.code, name)
        return _error_topic(Errors.LeaderNotAvailableError.errno, name)
    return _error_topic(Errors.UnknownTopicOrPartitionError.errno, name)


def _topic(name: str, image, live: set[int]):
    """A topic's partitions; one without a live leader says LEADER_NOT_AVAILABLE, as Kafka does."""
    state = image.topics[name]
    partitions = [R.MetadataResponseTopic.MetadataResponsePartition(
        error_code=0 if p.leader in live else Errors.LeaderNotAvailableError.errno, partition_index=p.partition,
        leader_id=p.leader if p.leader in live else -1, leader_epoch=p.leader_epoch,
        replica_nodes=p.replicas, isr_nodes=p.isr, offline_replicas=[r for r in p.replicas if r not in live])
        for p in sorted(state.partitions.values(), key=lambda p: p.partition)]
    return R.MetadataResponseTopic(error_code=0, name=name, topic_id=state.topic_id, is_internal=state.is_internal,
                                   partitions=partitions, authorized_operations=None)


def _error_topic(code: int, name, topic_id=ZERO_UUID):
    return R.MetadataResponseTopic(error_code=code, name=name, topic_id=topic_id, is_internal=False, partitions=[],
                                   authorized_operations=None)
