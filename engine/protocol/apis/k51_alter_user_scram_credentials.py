"""AlterUserScramCredentials: v0 (KIP-554).

Adds, replaces or removes users' SCRAM-SHA-256/512 credentials. The client sends the salt,
iteration count and salted password (never the password); the controller keeps only the
stored key and server key derived from it, in the metadata journal, so a user can log in
at once on every broker and after a restart. One result per user, all of a user's changes
applied or none, with Kafka's error codes (engine/cluster/scram_credentials.py).
Authorization: ALTER on the cluster, else every user's result is CLUSTER_AUTHORIZATION_FAILED
and nothing changes (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin.users import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse

from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER

Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult


@api(AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, versions=(0, 0))
async def handle_alter_user_scram_credentials(ctx, request) -> AlterUserScramCredentialsResponse:
    if not authorize.authorize_cluster(ctx, ALTER):
        users = dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions])
        return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[
            Result(user=user, error_code=Errors.ClusterAuthorizationFailedError.errno,
                   error_message="Request is not authorized.")
            for user in users])
    deletions = [(d.name, d.mechanism) for d in request.deletions]
    upsertions = [(u.name, u.mechanism, u.iterations, u.salt, u.salted_password) for u in request.upsertions]
    results = ctx.controller.alter_user_scram_credentials(deletions, upsertions)
    return AlterUserScramCredentialsResponse(
        throttle_time_ms=0,
        results=[Result(user=user, error_code=error.code if error else Errors.NoError.errno,
                        error_message=error.message if error else None) for user, error in results])
