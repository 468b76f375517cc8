"""DescribeCluster: v0-1 (KIP-700).

The cluster id, the controller id and the live brokers, from the metadata image: as in
KRaft, a stopped (fenced) broker is left out (v2's include_fenced_brokers would list it).
v1 endpoint_type 1 (brokers) is the only kind we have; asking for controllers (2) is
UNSUPPORTED_ENDPOINT_TYPE, as a combined-mode Kafka answers.
Brokers are listed with their endpoints on the listener the request came through.
include_cluster_authorized_operations: the cluster operations the principal may perform
(Kafka's 7 with no authorizer; 0 without DESCRIBE on the cluster, as Kafka's AuthHelper).
"""
import kafka.errors as Errors
from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse

from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import CLUSTER, CLUSTER_NAME, DESCRIBE

UNSUPPORTED_ENDPOINT_TYPE = 119


@api(DescribeClusterRequest, DescribeClusterResponse, versions=(0, 1))
async def handle_describe_cluster(ctx, request: DescribeClusterRequest) -> DescribeClusterResponse:
    image = ctx.broker.image
    if ctx.api_version >= 1 and request.endpoint_type != 1:
        return DescribeClusterResponse(throttle_time_ms=0, error_code=UNSUPPORTED_ENDPOINT_TYPE,
                                       error_message="Only broker endpoints are supported", endpoint_type=1,
                                       cluster_id=image.cluster_id, controller_id=-1, brokers=[])
    live = ctx.controller.live_brokers()
    endpoints = [(b, b.endpoint(ctx.listener_name)) for b in image.brokers.values() if b.node_id in live]
    brokers = [DescribeClusterResponse.DescribeClusterBroker(broker_id=b.node_id, host=endpoint[0], port=endpoint[1],
                                                             rack=b.rack, is_fenced=False)
               for b, endpoint in endpoints if endpoint is not None]
    return DescribeClusterResponse(throttle_time_ms=0, error_code=Errors.NoError.errno, error_message=None,
                                   endpoint_type=1, cluster_id=image.cluster_id, controller_id=image.controller_id,
                                   brokers=brokers,
                                   authorized_operations=_cluster_operations(ctx)
                                   if request.include_cluster_authorized_operations else None)


def _cluster_operations(ctx) -> set[int]:
    if not authorize.authorize_cluster(ctx, DESCRIBE):
        return set()
    return authorize.authorized_operations(ctx, CLUSTER, CLUSTER_NAME)
