"""CreateTopics: v2-7.

- Name rules as Kafka (INVALID_TOPIC_EXCEPTION), TOPIC_ALREADY_EXISTS, names that collide
  with an existing one by '.' versus '_' are refused; so are names that collide so with an
  internal topic not created yet ("collides with internal topic: __consumer_offsets"), which
  would otherwise never be created. The internal topics' own names are INVALID_REQUEST
  (engine/cluster/internal_topics.py).
- num_partitions / replication_factor of -1 take `num.partitions` and
  `default.replication.factor` (KIP-464).
- A manual assignment replaces both counts, which must then be -1 (INVALID_REQUEST, as KRaft);
  unknown or repeated brokers and uneven replica counts are INVALID_REPLICA_ASSIGNMENT.
- As KRaft, new partitions go to live brokers only (a stopped broker is fenced), and a manual
  assignment naming stopped brokers starts with its live replicas as ISR and leader; one that
  names only stopped brokers for a partition is INVALID_REPLICATION_FACTOR.
- Configs are checked against Kafka's topic config names and ranges; null values are refused
  (INVALID_CONFIG).
- validate_only checks everything and creates nothing.
- The controller mutation quota (KIP-599, `controller_mutation_rate`): THROTTLING_QUOTA_EXCEEDED
  (v6+) with throttle_time_ms once the client's bucket is empty, and the connection muted for
  that long (mutation_throttle.py).
- A topic of thousands of partitions is validated (a manual assignment partition by
  partition) and prepared in slices of the event loop, so other connections are served
  meanwhile (Controller.create_topic_sliced); so is a request of thousands of topics,
  validated and answered in slices (engine/cluster/slices.py), with the names checked once
  more just before the one commit (a name another request took meanwhile is
  TOPIC_ALREADY_EXISTS). Kafka's rule places the replicas a thousand partitions at a step.
- v5+ returns the topic's partitions, replication factor and full config; v7+ its id.
- Authorization (as KafkaApis): CREATE on the cluster, or on each topic (else
  TOPIC_AUTHORIZATION_FAILED); without DESCRIBE_CONFIGS on a created topic, v5+ carries no
  configs and topic_config_error_code TOPIC_AUTHORIZATION_FAILED.
"""
from collections import Counter

import kafka.errors as Errors
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse

from engine.cluster import slices
from engine.config import config_value_string, effective_topic_config
from engine.cluster.topic_changes import INLINE_PARTITIONS
from engine.cluster.topics import INTERNAL_TOPICS
from engine.errors import ApiError
from engine.protocol.mutation_throttle import MutationThrottle
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import CREATE, DESCRIBE_CONFIGS

Result = CreateTopicsResponse.CreatableTopicResult


@api(CreateTopicsRequest, CreateTopicsResponse, versions=(2, 7))
async def handle_create_topics(ctx, request: CreateTopicsRequest) -> CreateTopicsResponse:
    """Each topic is validated in request order (against the image and the topics accepted
    before it); the accepted ones are created together in one metadata commit, except topics
    of more than INLINE_PARTITIONS partitions, prepared in slices one by one after it."""
    counts = Counter(t.name for t in request.topics)
    throttle = MutationThrottle(ctx, 19)
    batch = ctx.controller.new_topics()
    may_create = _creatable(ctx, counts)
    results, accepted, big = [], [], {}
    with slices.Pacer() as pacer:        # a request may name a hundred thousand topics
        for topic in request.topics:
            await _validate(ctx, request, topic, counts, may_create, throttle, batch, pacer, results, accepted, big)
            await pacer.tick()
        if request.validate_only:
            return CreateTopicsResponse(throttle_time_ms=throttle.answer_throttle_ms(), topics=results)
        position = {results[i].name: i for i in accepted}
        for name, exc in batch.withdraw_taken().items():     # taken meanwhile, while the loop served others
            results[position[name]] = _error(name, exc.code, exc.message)
        batch.commit()
        for i, assignments in big.items():
            if not isinstance(results[i], Result):
                results[i] = await _create_sliced(ctx, results[i], assignments)
        for i in accepted:
            if isinstance(results[i], Result):
                continue                         # refused after all (taken meanwhile)
            state = ctx.broker.image.topics[results[i].name]
            results[i] = _success(ctx, state.name, state.topic_id,
                                  {p.partition: p.replicas for p in state.partitions.values()}, state.configs)
            await pacer.tick()
    return CreateTopicsResponse(throttle_time_ms=throttle.answer_throttle_ms(), topics=results)


def _creatable(ctx, names) -> set[str]:
    """CREATE on the cluster allows every topic; otherwise CREATE on each topic (as KafkaApis)."""
    return set(names) if authorize.authorize_cluster(ctx, CREATE, audited=False) else \
        authorize.authorize_topics(ctx, CREATE, names)


async def _validate(ctx, request, topic, counts, may_create, throttle, batch, pacer, results: list, accepted: list,
                    big: dict) -> None:
    """One topic: its error, its validate_only answer, or the request topic (accepted)."""
    if counts[topic.name] > 1:
        results.append(_error(topic.name, Errors.InvalidRequestError.errno, "Duplicate topic name."))
        return
    if topic.name not in may_create:
        results.append(_error(topic.name, Errors.TopicAuthorizationFailedError.errno, "Authorization failed."))
        return
    refused = None if request.validate_only else throttle.refused()
    if refused:
        results.append(_error(topic.name, *refused))
        return
    try:
        assignments, assignment = await _add(batch, topic, pacer)
    except ApiError as exc:
        results.append(_error(topic.name, exc.code, exc.message))
        return
    if request.validate_only:
        results.append(_success(ctx, topic.name, None, assignment, _configs(topic)))
        return
    throttle.record(len(assignment))
    if len(assignment) > INLINE_PARTITIONS:
        big[len(results)] = assignments      # not in the batch: prepared in slices below, on its own
    accepted.append(len(results))
    results.append(topic)


async def _add(batch, topic, pacer) -> tuple[dict[int, list[int]] | None, dict[int, list[int]]]:
    """The request's manual assignments (None without) and the validated assignment."""
    if topic.name in INTERNAL_TOPICS:
        raise ApiError(Errors.InvalidRequestError,
                       f"Creation of internal topic {topic.name} is prohibited: the broker creates it")
    assignments = await _assignments(topic, pacer)
    return assignments, await batch.add_sliced(topic.name, topic.num_partitions, topic.replication_factor,
                                               assignments, _configs(topic), pacer)


async def _create_sliced(ctx, topic, assignments):
    """A topic of thousands of partitions, prepared in slices of the event loop; the request
    topic back when created (its result is built with the others), else its error."""
    try:
        await ctx.controller.create_topic_sliced(topic.name, topic.num_partitions, topic.replication_factor,
                                                 assignments, _configs(topic))
    except ApiError as exc:
        return _error(topic.name, exc.code, exc.message)
    return topic


async def _assignments(topic, pacer) -> dict[int, list[int]] | None:
    assignments = {}
    for a in topic.assignments:
        if a.partition_index in assignments:
            raise ApiError(Errors.InvalidReplicationAssignmentError,
                           f"Found multiple manual partition assignments for partition {a.partition_index}")
        assignments[a.partition_index] = list(a.broker_ids)
        await pacer.tick()
    return assignments or None


def _configs(topic) -> dict[str, str]:
    """A null value cannot mean "the default" at creation: Kafka refuses it (INVALID_CONFIG)."""
    nulls = [c.name for c in topic.configs if c.value is None]
    if nulls:
        raise ApiError(Errors.InvalidConfigurationError,
                       f"Null value not supported for topic configs: {','.join(nulls)}")
    return {c.name: c.value for c in topic.configs}


def _success(ctx, name, topic_id, assignment, overrides):
    replication_factor = len(next(iter(assignment.values())))
    if not authorize.authorize_topic(ctx, DESCRIBE_CONFIGS, name):    # created, but its configs are not shown
        return Result(name=name, topic_id=topic_id, error_code=0, error_message=None, num_partitions=len(assignment),
                      replication_factor=replication_factor, configs=[],
                      topic_config_error_code=Errors.TopicAuthorizationFailedError.errno)
    configs = [Result.CreatableTopicConfigs(name=key, value=config_value_string(value), read_only=False,
                                            config_source=source, is_sensitive=False)
               for key, (value, source) in effective_topic_config(overrides, ctx.broker.config).items()]
    return Result(name=name, topic_id=topic_id, error_code=0, error_message=None, num_partitions=len(assignment),
                  replication_factor=replication_factor, configs=configs)


def _error(name, code: int, message: str | None):
    return Result(name=name, error_code=code, error_message=message, num_partitions=-1, replication_factor=-1,
                  configs=[])
