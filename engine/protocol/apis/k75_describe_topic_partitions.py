"""DescribeTopicPartitions: v0 (KIP-966).

Topics with their partitions, paged: at most `response_partition_limit` partitions (capped by
the broker's `max.request.partition.size.limit`, 2000) per answer, topics in name order, and a
`next_cursor` (topic, partition) where the next page starts; a request's `cursor` resumes there.
- An empty topic list describes every topic; a named topic that does not exist is
  UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name).
- A cursor naming a topic the list leaves out, or a negative partition, is INVALID_REQUEST.
- Leaders and replicas as Metadata says them for the listener asked; no eligible leader
  replicas (KIP-966's ELR is not kept): those fields are null.
- Authorization (as Kafka's DescribeTopicPartitionsRequestHandler): topics the principal may
  not DESCRIBE are left out of the all-topics answer and TOPIC_AUTHORIZATION_FAILED when named;
  every topic answered carries the operations the principal may perform on it.
"""
import uuid

import kafka.errors as Errors
from kafka.protocol.admin import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse

from engine.cluster.topics import validate_topic_name
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.validation import InvalidRequest
from engine.security import authorize
from kafka_rules.acls import DESCRIBE, TOPIC

R = DescribeTopicPartitionsResponse
Topic = R.DescribeTopicPartitionsResponseTopic
Partition = Topic.DescribeTopicPartitionsResponsePartition
ZERO_UUID = uuid.UUID(int=0)


@api(DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, versions=(0, 0))
async def handle_describe_topic_partitions(ctx, request: DescribeTopicPartitionsRequest) -> R:
    image = ctx.broker.image
    everything = not request.topics
    cursor = request.cursor
    start_topic = cursor.topic_name if cursor is not None else ""
    names = sorted(n for n in (image.topics if everything else {t.name for t in request.topics}) if n >= start_topic)
    if cursor is not None and (cursor.partition_index < 0 or (not everything and cursor.topic_name not in names)):
        raise InvalidRequest(f"DescribeTopicPartitions cursor {cursor.topic_name}:{cursor.partition_index} is not in "
                             "the topics asked, or its partition is negative")
    allowed = authorize.authorize_topics(ctx, DESCRIBE, names)
    refused = [_error_topic(Errors.TopicAuthorizationFailedError.errno, n) for n in names if n not in allowed]
    limit = max(min(ctx.broker.config.get("max.request.partition.size.limit"), request.response_partition_limit), 1)
    topics, next_cursor = _page(ctx, [n for n in names if n in allowed], start_topic,
                                cursor.partition_index if cursor else 0, limit, everything)
    for topic in topics:
        if topic.error_code == 0:
            # An int32 here (the codec packs Metadata's field, not this one): bit n is operation n.
            topic.topic_authorized_operations = sum(1 << op for op in authorize.authorized_operations(
                ctx, TOPIC, topic.name))
    return R(throttle_time_ms=0, topics=topics + ([] if everything else refused), next_cursor=next_cursor)


def _page(ctx, names: list[str], start_topic: str, start_partition: int, limit: int, everything: bool):
    image = ctx.broker.image
    live = ctx.controller.live_brokers()
    topics, remaining = [], limit
    for name in names:
        if remaining == 0:
            return topics, R.Cursor(topic_name=name, partition_index=0)
        state = image.topics.get(name)
        if state is None:
            if not everything:
                topics.append(_error_topic(_missing(name), name))
            continue
        first = start_partition if name == start_topic else 0
        indexes = sorted(i for i in state.partitions if i >= first)
        taken = indexes[:remaining]
        topics.append(Topic(error_code=0, name=name, topic_id=state.topic_id, is_internal=state.is_internal,
                            partitions=[_partition(ctx, state.partitions[i], live) for i in taken]))
        if len(indexes) > len(taken):
            return topics, R.Cursor(topic_name=name, partition_index=indexes[len(taken)])
        remaining -= len(taken)
    return topics, None


def _partition(ctx, p, live: set[int]) -> Partition:
    brokers = ctx.broker.image.brokers
    reachable = {b for b in live if b in brokers and brokers[b].endpoint(ctx.listener_name) is not None}
    return Partition(error_code=0, partition_index=p.partition, leader_id=p.leader if p.leader in reachable else -1,
                     leader_epoch=p.leader_epoch, replica_nodes=p.replicas, isr_nodes=p.isr,
                     eligible_leader_replicas=None, last_known_elr=None,
                     offline_replicas=[r for r in p.replicas if r not in reachable])


def _missing(name: str) -> int:
    try:
        validate_topic_name(name)
    except ApiError as exc:
        return exc.code
    return Errors.UnknownTopicOrPartitionError.errno


def _error_topic(code: int, name: str) -> Topic:
    return Topic(error_code=code, name=name, topic_id=ZERO_UUID, is_internal=False, partitions=[])
