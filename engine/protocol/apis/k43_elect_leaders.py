"""ElectLeaders: v0-2 (KIP-183, KIP-460).

Preferred (0): make each partition's first replica its leader, if it is live and in the
ISR; otherwise PREFERRED_LEADER_NOT_AVAILABLE, and ELECTION_NOT_NEEDED if it already leads.
Unclean (1): give a leaderless partition any live replica (ELIGIBLE_LEADERS_NOT_AVAILABLE
if none). topic_partitions null means every partition, and then, as Kafka's controller, the
answer leaves out the partitions whose leader is already the desired one (ELECTION_NOT_NEEDED).
Each partition's election is its own metadata commit; they run in slices of the event loop
(engine/cluster/slices.py), so that a request naming every partition of a big cluster never
holds it.
An election type other than 0 and 1 is refused whole: INVALID_REQUEST "Unknown election type N",
at the top and on each partition, as Kafka's controller answers; nothing is elected.
Authorization: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED (as KafkaApis; a request for
all partitions is then answered with none, so it names no topic).
"""
import kafka.errors as Errors
from kafka.protocol.admin import ElectLeadersRequest, ElectLeadersResponse

from engine.cluster import replication_control as RC
from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER

Result = ElectLeadersResponse.ReplicaElectionResult
PartitionResult = Result.PartitionResult


@api(ElectLeadersRequest, ElectLeadersResponse, versions=(0, 2))
async def handle_elect_leaders(ctx, request: ElectLeadersRequest) -> ElectLeadersResponse:
    controller = ctx.controller
    election_type = request.election_type if ctx.api_version >= 1 else 0
    if request.topic_partitions is None:
        wanted = {name: sorted(t.partitions) for name, t in ctx.broker.image.topics.items()}
    else:
        wanted = {}
        for entry in request.topic_partitions:
            wanted.setdefault(entry.topic, []).extend(entry.partitions)
    if not authorize.authorize_cluster(ctx, ALTER):
        return _refused(request, wanted, Errors.ClusterAuthorizationFailedError.errno, None)
    if election_type not in (RC.PREFERRED, RC.UNCLEAN):
        return _refused(request, wanted, Errors.InvalidRequestError.errno, f"Unknown election type {election_type}")
    results = []
    with slices.Pacer() as pacer:     # one election (one metadata commit) per partition, in slices
        for topic, partitions in wanted.items():
            answers = []
            for index in partitions:
                try:
                    controller.elect_leader(topic, index, election_type)
                    answers.append(PartitionResult(partition_id=index, error_code=0, error_message=None))
                except ApiError as exc:
                    if request.topic_partitions is None and exc.code == Errors.ElectionNotNeededError.errno:
                        await pacer.tick()
                        continue
                    answers.append(PartitionResult(partition_id=index, error_code=exc.code,
                                                   error_message=exc.message))
                await pacer.tick()
            results.append(Result(topic=topic, partition_result=answers))
    return ElectLeadersResponse(throttle_time_ms=0, error_code=Errors.NoError.errno, replica_election_results=results)


def _refused(request, wanted: dict, error: int, message: str | None) -> ElectLeadersResponse:
    """The whole request refused, as Kafka's ElectLeadersRequest.getErrorResponse: the error at
    the top and on each partition named (none when the request named none)."""
    return ElectLeadersResponse(throttle_time_ms=0, error_code=error, replica_election_results=[
        Result(topic=topic, partition_result=[PartitionResult(partition_id=i, error_code=error, error_message=message)
                                              for i in partitions])
        for topic, partitions in (wanted.items() if request.topic_partitions is not None else ())])
