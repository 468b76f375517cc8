"""CreateTopics: v2-7.

- Name rules as Kafka (INVALID_TOPIC_EXCEPTION), TOPIC_ALREADY_EXISTS, names that collide
  with an existing one by '.' versus '_' are refused.
- num_partitions / replication_factor of -1 take `num.partitions` and
  `default.replication.factor` (KIP-464).
- A manual assignment replaces both counts, which must then be -1 (INVALID_REQUEST, as KRaft);
  unknown or repeated brokers and uneven replica counts are INVALID_REPLICA_ASSIGNMENT.
- Configs are checked against Kafka's topic config names and ranges; null values are refused
  (INVALID_CONFIG).
- validate_only checks everything and creates nothing.
- The controller mutation quota (KIP-599, `controller_mutation_rate`): THROTTLING_QUOTA_EXCEEDED
  (v6+) with throttle_time_ms once the client's bucket is empty (mutation_throttle.py).
- A topic of thousands of partitions is prepared in slices of the event loop, so other
  connections are served meanwhile (Controller.create_topic_sliced).
- v5+ returns the topic's partitions, replication factor and full config; v7+ its id.
"""
import kafka.errors as Errors
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse

from engine.config import config_value_string, effective_topic_config
from engine.cluster.topics import INTERNAL_TOPICS
from engine.errors import ApiError
from engine.protocol.mutation_throttle import MutationThrottle
from engine.protocol.registry import api

Result = CreateTopicsResponse.CreatableTopicResult


@api(CreateTopicsRequest, CreateTopicsResponse, versions=(2, 7))
async def handle_create_topics(ctx, request: CreateTopicsRequest) -> CreateTopicsResponse:
    names = [t.name for t in request.topics]
    results = []
    throttle = MutationThrottle(ctx, 19)
    for topic in request.topics:
        if names.count(topic.name) > 1:
            results.append(_error(topic.name, Errors.InvalidRequestError.errno, "Duplicate topic name."))
            continue
        refused = None if request.validate_only else throttle.refused()
        if refused:
            results.append(_error(topic.name, *refused))
            continue
        result = await _create(ctx, topic, request.validate_only)
        if result.error_code == 0 and not request.validate_only:
            throttle.record(len(ctx.broker.image.topics[topic.name].partitions))
        results.append(result)
    return CreateTopicsResponse(throttle_time_ms=throttle.throttle_time_ms, topics=results)


async def _create(ctx, topic, validate_only: bool):
    controller = ctx.controller
    try:
        if topic.name in INTERNAL_TOPICS:
            raise ApiError(Errors.InvalidRequestError,
                           f"Creation of internal topic {topic.name} is prohibited: the broker creates it")
        assignments = _assignments(topic)
        configs = _configs(topic)
        if validate_only:
            assignment = controller.validate_new_topic(topic.name, topic.num_partitions, topic.replication_factor,
                                                       assignments, configs)
            return _success(ctx, topic.name, None, assignment, configs)
        state = await controller.create_topic_sliced(topic.name, topic.num_partitions, topic.replication_factor,
                                        assignments, configs)
    except ApiError as exc:
        return _error(topic.name, exc.code, exc.message)
    assignment = {p.partition: p.replicas for p in state.partitions.values()}
    return _success(ctx, topic.name, state.topic_id, assignment, state.configs)


def _assignments(topic) -> dict[int, list[int]] | None:
    assignments = {}
    for a in topic.assignments:
        if a.partition_index in assignments:
            raise ApiError(Errors.InvalidReplicationAssignmentError,
                           f"Found multiple manual partition assignments for partition {a.partition_index}")
        assignments[a.partition_index] = list(a.broker_ids)
    return assignments or None


def _configs(topic) -> dict[str, str]:
    """A null value cannot mean "the default" at creation: Kafka refuses it (INVALID_CONFIG)."""
    nulls = [c.name for c in topic.configs if c.value is None]
    if nulls:
        raise ApiError(Errors.InvalidConfigurationError,
                       f"Null value not supported for topic configs: {','.join(nulls)}")
    return {c.name: c.value for c in topic.configs}


def _success(ctx, name, topic_id, assignment, overrides):
    configs = [Result.CreatableTopicConfigs(name=key, value=config_value_string(value), read_only=False,
                                            config_source=source, is_sensitive=False)
               for key, (value, source) in effective_topic_config(overrides, ctx.broker.config).items()]
    replication_factor = len(next(iter(assignment.values())))
    return Result(name=name, topic_id=topic_id, error_code=0, error_message=None, num_partitions=len(assignment),
                  replication_factor=replication_factor, configs=configs)


def _error(name, code: int, message: str | None):
    return Result(name=name, error_code=code, error_message=message, num_partitions=-1, replication_factor=-1,
                  configs=[])
