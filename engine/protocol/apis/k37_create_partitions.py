"""CreatePartitions: v0-3.

Grows a topic to `count` partitions, with a manual assignment or Kafka's spread over the live
brokers for the new ones; each starts with its live replicas as ISR and leader, and a manual
assignment of stopped brokers only is INVALID_REPLICA_ASSIGNMENT, as KRaft answers. Shrinking
or keeping the count is INVALID_PARTITIONS; validate_only changes nothing.
The internal topics' counts never change: INVALID_REQUEST with the reason
(engine/cluster/internal_topics.py; Kafka allows it, and groups lose their offsets).
THROTTLING_QUOTA_EXCEEDED (v3+) under the controller mutation quota (KIP-599). Thousands of
new partitions are validated (a manual assignment partition by partition) and prepared in
slices of the event loop (Controller.create_partitions_sliced),
and so are thousands of topics, each its own metadata commit (engine/cluster/slices.py).
Authorization: ALTER on each topic, else TOPIC_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin import CreatePartitionsRequest, CreatePartitionsResponse

from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol.mutation_throttle import MutationThrottle
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER

Result = CreatePartitionsResponse.CreatePartitionsTopicResult


@api(CreatePartitionsRequest, CreatePartitionsResponse, versions=(0, 3))
async def handle_create_partitions(ctx, request: CreatePartitionsRequest) -> CreatePartitionsResponse:
    results = []
    throttle = MutationThrottle(ctx, 37)
    alterable = authorize.authorize_topics(ctx, ALTER, (t.name for t in request.topics))
    with slices.Pacer() as pacer:        # one metadata commit per topic: a request may name thousands
        for topic in request.topics:
            results.append(await _grow(ctx, request, topic, alterable, throttle))
            await pacer.tick()
    return CreatePartitionsResponse(throttle_time_ms=throttle.answer_throttle_ms(), results=results)


async def _grow(ctx, request, topic, alterable, throttle) -> Result:
    if topic.name not in alterable:
        return Result(name=topic.name, error_code=Errors.TopicAuthorizationFailedError.errno,
                      error_message="The topic authorization is failed.")
    assignments = [list(a.broker_ids) for a in topic.assignments] if topic.assignments else None
    refused = None if request.validate_only else throttle.refused()
    if refused:
        return Result(name=topic.name, error_code=refused[0], error_message=refused[1])
    state = ctx.broker.image.topics.get(topic.name)
    before = len(state.partitions) if state else 0
    try:
        await ctx.controller.create_partitions_sliced(topic.name, topic.count, assignments,
                                                      validate_only=request.validate_only)
    except ApiError as exc:
        return Result(name=topic.name, error_code=exc.code, error_message=exc.message)
    if not request.validate_only:
        throttle.record(topic.count - before)
    return Result(name=topic.name, error_code=0, error_message=None)
