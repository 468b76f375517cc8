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
- A request naming many topics is answered in slices of the event loop (engine/cluster/slices.py),
  and decoded and encoded off it (engine/protocol/big_requests.py): other connections are
  served meanwhile. Each topic is looked up in the image current at its turn.
- Authorized operations (v8+): with no authorizer, include_topic_authorized_operations answers
  Kafka's 8 topic operations, and v8-10's include_cluster_authorized_operations its 7 cluster
  ones; unasked, the fields say -2147483648 ("not requested").
"""
import uuid

import kafka.errors as Errors
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from engine.cluster import slices
from engine.cluster.topics import validate_topic_name
from engine.cluster.internal_topics import OFFSETS_TOPIC, TXN_TOPIC
from engine.errors import ApiError
from engine.protocol.acl_operations import CLUSTER_OPERATIONS, TOPIC_OPERATIONS
from engine.protocol.registry import api

R = MetadataResponse
ZERO_UUID = uuid.UUID(int=0)


@api(MetadataRequest, MetadataResponse, versions=(0, 12))
async def handle_metadata(ctx, request: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    image = broker.image
    live = broker.controller.live_brokers()
    topic_ops = TOPIC_OPERATIONS if ctx.api_version >= 8 and request.include_topic_authorized_operations else None
    cluster_ops = (CLUSTER_OPERATIONS if 8 <= ctx.api_version <= 10 and request.include_cluster_authorized_operations
                   else None)
    if request.topics is None or (ctx.api_version == 0 and not request.topics):
        def recipe(image):
            live = broker.controller.live_brokers()
            key = ("metadata", frozenset(live), topic_ops is not None, cluster_ops is not None)
            return key, lambda: _all_topics_response(image, live, topic_ops, cluster_ops)
        key, build = recipe(image)
        return broker.response_cache.get(image, key, ctx.api_version, build,
                                         recipe=(("metadata", key[2:]), recipe))
    allow_create = ctx.api_version < 4 or request.allow_auto_topic_creation

    def answer(entry):
        topic = _requested_topic(ctx, entry, allow_create, live)
        topic.authorized_operations = topic_ops   # Kafka answers them for every topic named, found or not
        return topic
    topics = await slices.map_sliced(request.topics, answer)
    return _response(broker.image, live, topics, cluster_ops)


def _all_topics_response(image, live: set[int], topic_ops, cluster_ops) -> MetadataResponse:
    topics = [_topic(name, image, live) for name in sorted(image.topics)]
    for topic in topics:
        topic.authorized_operations = topic_ops
    return _response(image, live, topics, cluster_ops)


def _response(image, live: set[int], topics: list, cluster_ops=None) -> MetadataResponse:
    brokers = [R.MetadataResponseBroker(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack)
               for b in image.brokers.values() if b.node_id in live]
    return MetadataResponse(throttle_time_ms=0, brokers=brokers, cluster_id=image.cluster_id,
                            controller_id=image.controller_id, topics=topics, authorized_operations=cluster_ops)


def _requested_topic(ctx, entry, allow_create: bool, live: set[int]):
    image = ctx.broker.image
    name = entry.name
    if name is None and entry.topic_id not in (None, ZERO_UUID):
        state = image.topics_by_id.get(entry.topic_id)
        if state is None:
            return _error_topic(Errors.UnknownTopicIdError.errno, None, entry.topic_id)
        return _topic(state.name, image, live)
    try:
        validate_topic_name(name)
    except ApiError as exc:
        return _error_topic(exc.code, name)
    if name in image.topics:
        return _topic(name, image, live)
    if name in (OFFSETS_TOPIC, TXN_TOPIC) and allow_create:
        # Internal: created with their own settings (offsets.topic.*, transaction.state.log.*),
        # never with num.partitions, as Kafka's AutoTopicCreationManager does.
        if name == OFFSETS_TOPIC:
            ctx.coordinator.ensure_offsets_topic()
        else:
            ctx.broker.txn_coordinator.ensure_topic()
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
