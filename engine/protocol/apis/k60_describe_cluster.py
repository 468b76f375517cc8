"""DescribeCluster: v0-1 (KIP-700).

The cluster id, the controller id and the live brokers, from the metadata image: as in
KRaft, a stopped (fenced) broker is left out (v2's include_fenced_brokers would list it).
v1 endpoint_type 1 (brokers) is the only kind we have; asking for controllers (2) is
UNSUPPORTED_ENDPOINT_TYPE, as a combined-mode Kafka answers.
include_cluster_authorized_operations: with no authorizer, Kafka's 7 cluster operations.
"""
import kafka.errors as Errors
from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse

from engine.protocol.acl_operations import CLUSTER_OPERATIONS
from engine.protocol.registry import api

UNSUPPORTED_ENDPOINT_TYPE = 119


@api(DescribeClusterRequest, DescribeClusterResponse, versions=(0, 1))
async def handle_describe_cluster(ctx, request: DescribeClusterRequest) -> DescribeClusterResponse:
    image = ctx.broker.image
    if ctx.api_version >= 1 and request.endpoint_type != 1:
        return DescribeClusterResponse(throttle_time_ms=0, error_code=UNSUPPORTED_ENDPOINT_TYPE,
                                       error_message="Only broker endpoints are supported", endpoint_type=1,
                                       cluster_id=image.cluster_id, controller_id=-1, brokers=[])
    live = ctx.controller.live_brokers()
    brokers = [DescribeClusterResponse.DescribeClusterBroker(broker_id=b.node_id, host=b.host, port=b.port,
                                                             rack=b.rack, is_fenced=False)
               for b in image.brokers.values() if b.node_id in live]
    return DescribeClusterResponse(throttle_time_ms=0, error_code=Errors.NoError.errno, error_message=None,
                                   endpoint_type=1, cluster_id=image.cluster_id, controller_id=image.controller_id,
                                   brokers=brokers,
                                   authorized_operations=CLUSTER_OPERATIONS if request.include_cluster_authorized_operations
                                   else None)
