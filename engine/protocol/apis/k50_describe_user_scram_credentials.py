"""DescribeUserScramCredentials: v0 (KIP-554).

Lists users' SCRAM credentials as mechanism and iteration count only - never salts or keys.
Null or empty `users` lists every user that has one; a named user without any gets
RESOURCE_NOT_FOUND, a name asked twice DUPLICATE_RESOURCE (engine/cluster/scram_credentials.py).
Authorization: DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin.users import DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse

from engine.cluster import scram_credentials as SC
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult


@api(DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse, versions=(0, 0))
async def handle_describe_user_scram_credentials(ctx, request) -> DescribeUserScramCredentialsResponse:
    if not authorize.authorize_cluster(ctx, DESCRIBE):
        return DescribeUserScramCredentialsResponse(throttle_time_ms=0,
                                                    error_code=Errors.ClusterAuthorizationFailedError.errno,
                                                    error_message="Request is not authorized.", results=[])
    users = None if request.users is None else [u.name for u in request.users]
    results = [Result(user=user, error_code=error.code if error else Errors.NoError.errno,
                      error_message=error.message if error else None,
                      credential_infos=[Result.CredentialInfo(mechanism=m, iterations=i) for m, i in infos])
               for user, error, infos in SC.describe(ctx.broker.image.scram_credentials, users)]
    return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=Errors.NoError.errno,
                                                error_message=None, results=results)
