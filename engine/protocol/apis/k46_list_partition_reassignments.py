"""ListPartitionReassignments: v0 (KIP-455).

The ongoing reassignments, all of them or those of the named partitions: the current
replica set (target plus replicas being removed), the replicas being added and removed.
Authorization: DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED (as KafkaApis).
The named partitions and the moves are gone through in slices of the event loop
(engine/cluster/slices.py): a request may name millions of partitions.
"""
import kafka.errors as Errors
from kafka.protocol.admin import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse

from engine.cluster import slices
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

Topic = ListPartitionReassignmentsResponse.OngoingTopicReassignment
Ongoing = Topic.OngoingPartitionReassignment


@api(ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, versions=(0, 0))
async def handle_list_partition_reassignments(ctx, request):
    if not authorize.authorize_cluster(ctx, DESCRIBE):
        return ListPartitionReassignmentsResponse(throttle_time_ms=0,
                                                  error_code=Errors.ClusterAuthorizationFailedError.errno,
                                                  error_message=None, topics=[])
    topics: dict[str, list] = {}
    with slices.Pacer() as pacer:
        wanted = None
        if request.topics is not None:
            wanted = set()
            await slices.for_each(((t.name, p) for t in request.topics for p in t.partition_indexes), wanted.add)
        for (name, index), state in sorted(ctx.controller.ongoing_reassignments().items()):
            if wanted is None or (name, index) in wanted:
                topics.setdefault(name, []).append(Ongoing(partition_index=index, replicas=state.replicas,
                                                           adding_replicas=state.adding_replicas,
                                                           removing_replicas=state.removing_replicas))
            await pacer.tick()
    return ListPartitionReassignmentsResponse(throttle_time_ms=0, error_code=0, error_message=None,
                                              topics=[Topic(name=n, partitions=ps) for n, ps in topics.items()])
