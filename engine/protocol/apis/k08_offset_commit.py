"""OffsetCommit: v2-9.

Stores a group's committed offsets as records in `__consumer_offsets` and answers once they
are replicated (the high watermark covers them).
- Generation fencing, in Kafka's order: the member first (UNKNOWN_MEMBER_ID; a static
  member's instance id held by another member id is FENCED_INSTANCE_ID), then its generation
  (ILLEGAL_GENERATION); only a valid member of the current generation hears
  REBALANCE_IN_PROGRESS during CompletingRebalance. Generation -1 with no member commits for
  a group that does not use group membership (standalone consumers, admin tools) - allowed
  only while the group is Empty, else UNKNOWN_MEMBER_ID. A generation >= 0 for a group the
  coordinator does not have: ILLEGAL_GENERATION, v9 GROUP_ID_NOT_FOUND (as Kafka).
- Consumer-protocol groups (KIP-848): v9's generation_id_or_member_epoch is the member
  epoch; a member must send its current one (else STALE_MEMBER_EPOCH) and use v9+ (else
  UNSUPPORTED_VERSION); an unknown member gets UNKNOWN_MEMBER_ID; epoch -1 commits (admin
  tools) only while the group has no members.
- v2-4 retention_time_ms sets an expiry for these offsets (capped at Long.MAX, so a huge
  retention never expires them); otherwise offsets.retention.minutes applies once the group is
  empty. v6+ carries the leader epoch; v7+ group_instance_id.
- Per partition: UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist,
  OFFSET_METADATA_TOO_LARGE beyond offset.metadata.max.bytes; group-level errors
  (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, ...) are repeated on every partition.
- Authorization (as KafkaApis): READ on the group, else every partition is
  GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions are TOPIC_AUTHORIZATION_FAILED.
"""
import kafka.errors as Errors
from kafka.protocol.consumer import OffsetCommitRequest, OffsetCommitResponse

from engine.clock import now_ms
from engine.errors import ApiError
from engine.protocol.offset_commits import checked_offsets, topic_answers
from engine.protocol.registry import api
from engine.security import authorize
from engine.storage.log_config import LONG_MAX
from kafka_rules.acls import READ

TopicResponse = OffsetCommitResponse.OffsetCommitResponseTopic
PartitionResponse = TopicResponse.OffsetCommitResponsePartition


@api(OffsetCommitRequest, OffsetCommitResponse, versions=(2, 9))
async def handle_offset_commit(ctx, request: OffsetCommitRequest) -> OffsetCommitResponse:
    broker, version = ctx.broker, ctx.api_version
    now = now_ms()
    retention = request.retention_time_ms if version <= 4 else -1
    # A retention near Long.MAX keeps the offsets for good (Kafka's sum would wrap negative and expire them).
    expire_at = min(now + retention, LONG_MAX) if retention >= 0 else -1
    commit = await checked_offsets(broker, request.topics, with_leader_epoch=version >= 6, now=now,
                                   expire_at=expire_at)
    if not authorize.authorize_group(ctx, READ, request.group_id):
        commit.refuse_all(Errors.GroupAuthorizationFailedError.errno)     # the topics are not asked about
    else:
        commit.deny_topics(authorize.authorize_topics(ctx, READ, (t.name for t in request.topics)))
    if commit.offsets:
        try:
            await broker.group_coordinator.commit_offsets(
                group_id=request.group_id, member_id=request.member_id,
                group_instance_id=request.group_instance_id if version >= 7 else None,
                generation_id=request.generation_id_or_member_epoch, offsets=commit.offsets, api_version=version)
        except ApiError as exc:
            commit.fail_stored(exc.code)
    return OffsetCommitResponse(throttle_time_ms=0,
                                topics=await topic_answers(request.topics, commit, TopicResponse, PartitionResponse))
