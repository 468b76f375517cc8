"""CreatePartitions: v0-3.

Grows a topic to `count` partitions, with a manual assignment or Kafka's spread for the
new ones. Shrinking or keeping the count is INVALID_PARTITIONS; validate_only changes nothing.
"""
from kafka.protocol.admin import CreatePartitionsRequest, CreatePartitionsResponse

from engine.errors import ApiError
from engine.protocol.registry import api

Result = CreatePartitionsResponse.CreatePartitionsTopicResult


@api(CreatePartitionsRequest, CreatePartitionsResponse, versions=(0, 3))
async def handle_create_partitions(ctx, request: CreatePartitionsRequest) -> CreatePartitionsResponse:
    results = []
    for topic in request.topics:
        assignments = [list(a.broker_ids) for a in topic.assignments] if topic.assignments else None
        try:
            ctx.controller.create_partitions(topic.name, topic.count, assignments,
                                                    validate_only=request.validate_only)
        except ApiError as exc:
            results.append(Result(name=topic.name, error_code=exc.code, error_message=exc.message))
            continue
        results.append(Result(name=topic.name, error_code=0, error_message=None))
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)
