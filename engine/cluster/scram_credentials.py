"""SCRAM credentials (KIP-554): how AlterUserScramCredentials changes them, how
DescribeUserScramCredentials lists them, and their metadata records.

The image keeps, per user, a ScramCredential per mechanism (salt, stored key, server key,
iterations: engine/security/scram.py); the metadata journal holds one `scram_credential`
record per change, as Kafka's UserScramCredentialRecord, so credentials survive restarts.
The salted password the client sends is turned into the keys at once and never kept.
Nothing here logs a credential, and errors name only users and mechanisms.

Kafka's rules (ScramControlManager): a user's changes are applied all or none; the same
(user, mechanism) twice in one request is DUPLICATE_RESOURCE; an unknown mechanism
UNSUPPORTED_SASL_MECHANISM; deleting a missing credential RESOURCE_NOT_FOUND; an empty user,
empty salt or salted password of the wrong length, or iterations outside 4096..16384
UNACCEPTABLE_CREDENTIAL. The internal inter-broker principal's name is refused likewise.

Pure functions over the image's dict; the controller (the event loop) owns the dict.
"""
from __future__ import annotations

import base64

import kafka.errors as Errors

from engine.errors import ApiError
from engine.security import scram
from engine.security.settings import INTER_BROKER_USER

Credentials = dict[str, dict[str, scram.ScramCredential]]      # user -> mechanism name -> credential


def credential_record(user: str, mechanism: str, credential: scram.ScramCredential | None) -> dict:
    """credential None removes the user's credential for that mechanism."""
    record = {"type": "scram_credential", "user": user, "mechanism": mechanism, "credential": None}
    if credential is not None:
        record["credential"] = {"salt": _b64(credential.salt), "stored_key": _b64(credential.stored_key),
                                "server_key": _b64(credential.server_key), "iterations": credential.iterations}
    return record


def check_record(record: dict) -> None:
    if not isinstance(record["user"], str) or not record["user"] or record["mechanism"] not in scram.MECHANISM_IDS:
        raise ValueError("bad SCRAM credential user or mechanism")
    credential = record["credential"]
    if credential is not None:
        _credential_of(record)


def apply_record(credentials: Credentials, record: dict) -> None:
    user, mechanism = record["user"], record["mechanism"]
    if record["credential"] is None:
        credentials.get(user, {}).pop(mechanism, None)
        if not credentials.get(user):
            credentials.pop(user, None)
    else:
        credentials.setdefault(user, {})[mechanism] = _credential_of(record)


def snapshot_records(credentials: Credentials) -> list[dict]:
    return [credential_record(user, mechanism, credential)
            for user, by_mechanism in credentials.items() for mechanism, credential in by_mechanism.items()]


def alter(credentials: Credentials, deletions: list[tuple[str, int]],
          upsertions: list[tuple[str, int, int, bytes, bytes]]) -> tuple[list[tuple[str, ApiError | None]], list[dict]]:
    """(per-user results in first-seen order, the records to commit for the users that passed)."""
    users: dict[str, list[dict]] = {}
    errors: dict[str, ApiError] = {}
    seen: set[tuple[str, int]] = set()
    changes = [(user, number, None) for user, number in deletions] + \
              [(user, number, (iterations, salt, salted)) for user, number, iterations, salt, salted in upsertions]
    for user, number, upsert in changes:
        users.setdefault(user, [])
        try:
            if (user, number) in seen:
                raise ApiError(Errors.DuplicateResourceError,
                               "A user credential cannot be altered twice in the same request")
            seen.add((user, number))
            users[user].append(_change(credentials, user, number, upsert))
        except ApiError as exc:
            errors.setdefault(user, exc)
    results = [(user, errors.get(user)) for user in users]
    records = [record for user, records in users.items() if user not in errors for record in records]
    return results, records


def _change(credentials: Credentials, user: str, number: int, upsert) -> dict:
    mechanism = scram.MECHANISM_NAMES.get(number)
    if mechanism is None:
        raise ApiError(Errors.UnsupportedSaslMechanismError, "Unknown SCRAM mechanism")
    if not user:
        raise ApiError(Errors.UnacceptableCredentialError, "Username must not be empty")
    if user == INTER_BROKER_USER:
        raise ApiError(Errors.UnacceptableCredentialError, "This user name is reserved for the engine")
    if upsert is None:
        if mechanism not in credentials.get(user, {}):
            raise ApiError(Errors.ResourceNotFoundError, "Attempt to delete a user credential that does not exist")
        return credential_record(user, mechanism, None)
    iterations, salt, salted = upsert
    if iterations < scram.MIN_ITERATIONS:
        raise ApiError(Errors.UnacceptableCredentialError, "Too few iterations")
    if iterations > scram.MAX_ITERATIONS:
        raise ApiError(Errors.UnacceptableCredentialError, "Too many iterations")
    if not salt or not salted or len(salted) != scram.digest_size(mechanism):
        raise ApiError(Errors.UnacceptableCredentialError, "Salt or salted password is empty or malformed")
    credential = scram.credential_from_salted_password(mechanism, bytes(salted), bytes(salt), iterations)
    return credential_record(user, mechanism, credential)


def describe(credentials: Credentials, users: list[str] | None) -> list[tuple[str, ApiError | None, list]]:
    """(user, error, [(mechanism id, iterations)]) per user asked (all users if none asked)."""
    if not users:
        return [(user, None, _infos(credentials[user])) for user in sorted(credentials)]
    results = []
    for user in dict.fromkeys(users):
        if users.count(user) > 1:
            results.append((user, ApiError(Errors.DuplicateResourceError,
                                           "Cannot describe SCRAM credentials for the same user twice in a single "
                                           "request"), []))
        elif user not in credentials:
            results.append((user, ApiError(Errors.ResourceNotFoundError,
                                           "Attempt to describe a user credential that does not exist"), []))
        else:
            results.append((user, None, _infos(credentials[user])))
    return results


def _infos(by_mechanism: dict[str, scram.ScramCredential]) -> list[tuple[int, int]]:
    return [(scram.MECHANISM_IDS[m], c.iterations) for m, c in sorted(by_mechanism.items())]


def _credential_of(record: dict) -> scram.ScramCredential:
    credential = record["credential"]
    iterations = credential["iterations"]
    if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < scram.MIN_ITERATIONS:
        raise ValueError("bad SCRAM iterations")
    return scram.ScramCredential(salt=base64.b64decode(credential["salt"], validate=True),
                                 stored_key=base64.b64decode(credential["stored_key"], validate=True),
                                 server_key=base64.b64decode(credential["server_key"], validate=True),
                                 iterations=iterations)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
