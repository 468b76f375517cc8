"""DeleteTopics: v1-6.

Deletes by name, or by topic id (v6+). The controller removes the topic from the metadata
first; each broker then deletes the partition logs (renamed to `*-delete`, then removed).
UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID for topics that do not exist;
TOPIC_DELETION_DISABLED when `delete.topic.enable` is false; THROTTLING_QUOTA_EXCEEDED (v5+)
under the controller mutation quota (KIP-599, mutation_throttle.py). The internal topics
(`__consumer_offsets`, `__transaction_state`) hold the coordinators' state and cannot be
deleted: INVALID_REQUEST, as Kafka refuses changes to their partitions. Topics are deleted
in request order, each validated against the image less the topics accepted before it (a
topic named twice is unknown the second time), in slices of the event loop
(engine/cluster/slices.py); the accepted ones are then removed up to a thousand to a metadata
commit (topics another request deleted meanwhile are UNKNOWN_TOPIC_OR_PARTITION), so each
broker drops their replicas in one pass per commit, not per topic.
Authorization (as KafkaApis): DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED; a topic
named by id that the principal may not DESCRIBE is answered without its name.
"""
import uuid

import kafka.errors as Errors
from kafka.protocol.admin import DeleteTopicsRequest, DeleteTopicsResponse

from engine.cluster import slices
from engine.cluster.topics import INTERNAL_TOPICS
from engine.errors import ApiError
from engine.protocol.mutation_throttle import MutationThrottle
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DELETE, DESCRIBE

Result = DeleteTopicsResponse.DeletableTopicResult
ZERO_UUID = uuid.UUID(int=0)


@api(DeleteTopicsRequest, DeleteTopicsResponse, versions=(1, 6))
async def handle_delete_topics(ctx, request: DeleteTopicsRequest) -> DeleteTopicsResponse:
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in request.topic_names]
    throttle = MutationThrottle(ctx, 20)
    batch = ctx.controller.topic_deletions()
    with slices.Pacer() as pacer:
        responses = await slices.map_sliced(wanted, lambda w: _delete(ctx, w[0], w[1], throttle, batch), pacer)
        position = {r.topic_id: i for i, r in enumerate(responses) if r.error_code == 0}
        while batch.pending():
            for topic_id, exc in batch.commit_next().items():     # not removed after all
                answer = responses[position[topic_id]]
                responses[position[topic_id]] = Result(name=answer.name, topic_id=topic_id, error_code=exc.code,
                                                       error_message=exc.message)
            await pacer.tick()
    return DeleteTopicsResponse(throttle_time_ms=throttle.answer_throttle_ms(), responses=responses)


def _delete(ctx, name, topic_id, throttle: MutationThrottle, batch):
    if name is None:
        state = batch.topic_by_id(topic_id)
        if state is None:
            return Result(name=None, topic_id=topic_id, error_code=Errors.UnknownTopicIdError.errno,
                          error_message=None)
        name = state.name
        if not authorize.authorize_topic(ctx, DESCRIBE, name):      # the id is no secret, the name is
            return Result(name=None, topic_id=topic_id, error_code=Errors.TopicAuthorizationFailedError.errno,
                          error_message=None)
    if not authorize.authorize_topic(ctx, DELETE, name):
        return Result(name=name, topic_id=topic_id, error_code=Errors.TopicAuthorizationFailedError.errno,
                      error_message=None)
    state = batch.topic(name)
    if name in INTERNAL_TOPICS:
        return Result(name=name, topic_id=state.topic_id if state else topic_id,
                      error_code=Errors.InvalidRequestError.errno,
                      error_message=f"{name} is an internal topic and cannot be deleted")
    resolved_id = state.topic_id if state else topic_id
    refused = throttle.refused() if state is not None else None
    if refused:
        return Result(name=name, topic_id=resolved_id, error_code=refused[0], error_message=refused[1])
    try:
        batch.add(name)
    except ApiError as exc:
        return Result(name=name, topic_id=resolved_id, error_code=exc.code, error_message=exc.message)
    throttle.record(len(state.partitions))
    return Result(name=name, topic_id=resolved_id, error_code=0, error_message=None)
