"""TxnOffsetCommit: v0-4.

A transactional producer's consumed offsets (`send_offsets_to_transaction`), sent to the
group coordinator after AddOffsetsToTxn. They are written to `__consumer_offsets` as a
transactional batch of the producer and stay pending: OffsetFetch does not show them until
the transaction's COMMIT marker reaches that partition (an ABORT drops them), and
require_stable fetches answer UNSTABLE_OFFSET_COMMIT meanwhile. A restart keeps them pending
or applies them as the log's markers say. At the COMMIT, an offset replaces the group's
committed one only if written after it (as Kafka's replayEndTransactionMarker), so a
transaction never takes back a commit the group made after its TxnOffsetCommit.
- v3+ (KIP-447): a member id, instance id or generation, when given, must match the group
  (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION), so a zombie is fenced by the group.
- KIP-890 part 1: the group's `__consumer_offsets` partition must be in the producer's open
  transaction (AddOffsetsToTxn), as the transaction coordinator says, else INVALID_TXN_STATE
  (`transaction.partition.verification.enable`).
- Per partition: UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE; group-level errors
  (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, PRODUCER_FENCED - v0-2: INVALID_PRODUCER_EPOCH -
  when the producer's epoch is older than the partition has seen) on every partition.
Gaps: v5 (KIP-890 part 2) is not advertised.
Authorization (as KafkaApis): WRITE on the transactional id, READ on the group (each refusing
every partition), READ on each topic (TOPIC_AUTHORIZATION_FAILED).
"""
import kafka.errors as Errors
from kafka.protocol.producer.transaction import TxnOffsetCommitRequest, TxnOffsetCommitResponse

from engine.clock import now_ms
from engine.errors import ApiError
from engine.protocol.offset_commits import checked_offsets, topic_answers
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ, WRITE
from engine.protocol.txn_errors import for_version

TopicResponse = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
PartitionResponse = TopicResponse.TxnOffsetCommitResponsePartition


@api(TxnOffsetCommitRequest, TxnOffsetCommitResponse, versions=(0, 4))
async def handle_txn_offset_commit(ctx, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    broker, version, now = ctx.broker, ctx.api_version, now_ms()
    commit = await checked_offsets(broker, request.topics, with_leader_epoch=version >= 2, now=now)
    refused = _refusal(ctx, request)
    if refused:
        commit.refuse_all(refused)                  # the topics are not asked about
    else:
        commit.deny_topics(authorize.authorize_topics(ctx, READ, (t.name for t in request.topics)))
    if commit.offsets:
        try:
            await broker.group_coordinator.commit_txn_offsets(
                transactional_id=request.transactional_id, group_id=request.group_id,
                producer_id=request.producer_id, producer_epoch=request.producer_epoch,
                member_id=request.member_id if version >= 3 else "",
                group_instance_id=request.group_instance_id if version >= 3 else None,
                generation_id=request.generation_id if version >= 3 else -1, offsets=commit.offsets)
        except ApiError as exc:
            commit.fail_stored(for_version(exc.code, version, 3))
    return TxnOffsetCommitResponse(throttle_time_ms=0,
                                   topics=await topic_answers(request.topics, commit, TopicResponse, PartitionResponse))


def _refusal(ctx, request) -> int:
    """WRITE on the transactional id, then READ on the group (as KafkaApis); 0 if both pass."""
    if not authorize.authorize_transactional_id(ctx, WRITE, request.transactional_id):
        return Errors.TransactionalIdAuthorizationFailedError.errno
    if not authorize.authorize_group(ctx, READ, request.group_id):
        return Errors.GroupAuthorizationFailedError.errno
    return 0
