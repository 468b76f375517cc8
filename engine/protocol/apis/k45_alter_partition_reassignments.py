"""AlterPartitionReassignments: v0 (KIP-455).

Replicas set: start moving the partition there (an empty list, an unregistered broker or one
named twice is INVALID_REPLICA_ASSIGNMENT with KRaft's message, engine/cluster/assignment.py).
The new replicas join as followers and catch up (throttled if the topic's
`*.replication.throttled.replicas` say so); when all
target replicas are in the ISR the controller drops the removed ones and, if the leader
is among them, moves leadership to a target replica. A new target for a partition already
moving is measured against its current replicas, as Kafka's controller does: a replica
being added that the new target leaves out is removed like any other, after the target is in
sync, never left in the ISR or leading. Replicas null: cancel, returning to the original
replicas (NO_REASSIGNMENT_IN_PROGRESS if none is going on); when only replicas being added
are in sync, a cancel needs unclean election on the topic, else INVALID_REPLICA_ASSIGNMENT
with Kafka's message.
Each partition is its own metadata commit; they run in slices of the event loop
(engine/cluster/slices.py).
Authorization: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse

from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER

TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
PartitionResponse = TopicResponse.ReassignablePartitionResponse


@api(AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, versions=(0, 0))
async def handle_alter_partition_reassignments(ctx, request):
    controller = ctx.controller
    if not authorize.authorize_cluster(ctx, ALTER):
        error = Errors.ClusterAuthorizationFailedError.errno
        return AlterPartitionReassignmentsResponse(throttle_time_ms=0, error_code=error, error_message=None, responses=[
            TopicResponse(name=t.name, partitions=[
                PartitionResponse(partition_index=p.partition_index, error_code=error, error_message=None)
                for p in t.partitions])
            for t in request.topics])
    responses = []
    with slices.Pacer() as pacer:     # one metadata commit per partition, in slices
        for topic in request.topics:
            answers = []
            for partition in topic.partitions:
                target = None if partition.replicas is None else list(partition.replicas)
                try:
                    controller.reassign_partition(topic.name, partition.partition_index, target)
                    answers.append(PartitionResponse(partition_index=partition.partition_index, error_code=0,
                                                     error_message=None))
                except ApiError as exc:
                    answers.append(PartitionResponse(partition_index=partition.partition_index,
                                                     error_code=exc.code, error_message=exc.message))
                await pacer.tick()
            responses.append(TopicResponse(name=topic.name, partitions=answers))
    return AlterPartitionReassignmentsResponse(throttle_time_ms=0, error_code=0, error_message=None,
                                               responses=responses)
