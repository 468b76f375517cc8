"""AlterUserScramCredentials: v0 (KIP-554).

Adds, replaces or removes users' SCRAM-SHA-256/512 credentials. The client sends the salt,
iteration count and salted password (never the password); the controller keeps only the
stored key and server key derived from it, in the metadata journal, so a user can log in
at once on every broker and after a restart. One result per user, all of a user's changes
applied or none, with Kafka's error codes (engine/cluster/scram_credentials.py).
Gaps: no authorization (no ACLs: any authenticated client may alter credentials).
"""
import kafka.errors as Errors
from kafka.protocol.admin.users import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse

from engine.protocol.registry import api

Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult


@api(AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, versions=(0, 0))
async def handle_alter_user_scram_credentials(ctx, request) -> AlterUserScramCredentialsResponse:
    deletions = [(d.name, d.mechanism) for d in request.deletions]
    upsertions = [(u.name, u.mechanism, u.iterations, u.salt, u.salted_password) for u in request.upsertions]
    results = ctx.controller.alter_user_scram_credentials(deletions, upsertions)
    return AlterUserScramCredentialsResponse(
        throttle_time_ms=0,
        results=[Result(user=user, error_code=error.code if error else Errors.NoError.errno,
                        error_message=error.message if error else None) for user, error in results])
