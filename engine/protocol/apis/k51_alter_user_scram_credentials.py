"""AlterUserScramCredentials: v0 (KIP-554).

Adds, replaces or removes users' SCRAM-SHA-256/512 credentials. The client sends the salt,
iteration count and salted password (never the password); the controller keeps only the
stored key and server key derived from it, in the metadata journal, so a user can log in
at once on every broker and after a restart. One result per user, all of a user's changes
applied or none, with Kafka's error codes (engine/cluster/scram_credentials.py).
Users are taken USERS_PER_COMMIT to a metadata commit, in slices of the event loop
(engine/cluster/slices.py): a request of a million users never holds the other connections.
Authorization: ALTER on the cluster, else every user's result is CLUSTER_AUTHORIZATION_FAILED
and nothing changes (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin.users import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse

from engine.cluster import slices
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import ALTER

Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
USERS_PER_COMMIT = 500


@api(AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, versions=(0, 0))
async def handle_alter_user_scram_credentials(ctx, request) -> AlterUserScramCredentialsResponse:
    if not authorize.authorize_cluster(ctx, ALTER):
        users = dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions])
        return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[
            Result(user=user, error_code=Errors.ClusterAuthorizationFailedError.errno,
                   error_message="Request is not authorized.")
            for user in users])
    # Each user's changes, users in first-seen order (deletions first, as the results list them).
    by_user: dict[str, tuple[list, list]] = {}
    for d in request.deletions:
        by_user.setdefault(d.name, ([], []))[0].append((d.name, d.mechanism))
    for u in request.upsertions:
        by_user.setdefault(u.name, ([], []))[1].append((u.name, u.mechanism, u.iterations, u.salt, u.salted_password))
    users, errors = list(by_user), {}
    with slices.Pacer() as pacer:
        for start in range(0, len(users), USERS_PER_COMMIT):
            lot = users[start:start + USERS_PER_COMMIT]
            errors.update(ctx.controller.alter_user_scram_credentials(
                [d for user in lot for d in by_user[user][0]], [u for user in lot for u in by_user[user][1]]))
            await pacer.tick()
    return AlterUserScramCredentialsResponse(
        throttle_time_ms=0,
        results=[Result(user=user, error_code=errors[user].code if errors[user] else Errors.NoError.errno,
                        error_message=errors[user].message if errors[user] else None) for user in users])
