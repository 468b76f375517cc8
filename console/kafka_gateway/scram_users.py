"""SCRAM credential calls (KIP-554): DescribeUserScramCredentials (k50), AlterUserScramCredentials (k51).

Use them through a gateway: `with open_gateway(settings) as gw: gw.scram_users.describe()`.

The password never leaves this module as itself: an upsertion salts it here (PBKDF2 with a
random salt, kafka-python's UserScramCredentialUpsertion) and sends only the salt, the
iteration count and the salted password, as Kafka's tools do; nothing here logs or returns it.
Refusals raise GatewayError with Kafka's code (NotAuthorized for an authorization failure).
"""
from __future__ import annotations

from dataclasses import dataclass

from kafka.admin import UserScramCredentialUpsertion
from kafka.protocol.admin.users import AlterUserScramCredentialsRequest, DescribeUserScramCredentialsRequest

from console.kafka_gateway.errors import error_for_code, translated
from console.kafka_gateway.wire import send

MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
MECHANISM_IDS = {name: number for number, name in MECHANISMS.items()}


@dataclass(frozen=True)
class ScramCredential:
    mechanism: str                  # SCRAM-SHA-256 or SCRAM-SHA-512
    iterations: int


@dataclass(frozen=True)
class ScramUser:
    name: str
    credentials: tuple[ScramCredential, ...]


class ScramUserCalls:
    """The SCRAM credential calls of one gateway (see the module docstring)."""

    def __init__(self, gateway) -> None:
        self._manager = gateway._admin._manager

    @translated
    def describe(self) -> list[ScramUser]:
        """Every user with a SCRAM credential, by name."""
        answer = self._send(DescribeUserScramCredentialsRequest(users=None))
        if answer.error_code:
            raise error_for_code(answer.error_code, answer.error_message)
        users = [ScramUser(r.user, tuple(ScramCredential(MECHANISMS.get(c.mechanism, f"UNKNOWN({c.mechanism})"),
                                                         c.iterations) for c in r.credential_infos))
                 for r in answer.results if not r.error_code]
        return sorted(users, key=lambda u: u.name)

    @translated
    def upsert(self, user: str, mechanism: str, password: str, iterations: int) -> None:
        """Add or replace one credential of `user`."""
        salted = UserScramCredentialUpsertion(user, mechanism, password, iterations=iterations)
        entry = AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
            name=user, mechanism=MECHANISM_IDS[mechanism], iterations=iterations, salt=salted.salt,
            salted_password=salted.salted_password)
        self._alter(AlterUserScramCredentialsRequest(deletions=[], upsertions=[entry]))

    @translated
    def delete(self, user: str, mechanisms: list[str]) -> None:
        """Remove these credentials of `user` (Kafka applies a user's changes all or none)."""
        entry = AlterUserScramCredentialsRequest.ScramCredentialDeletion
        self._alter(AlterUserScramCredentialsRequest(
            deletions=[entry(name=user, mechanism=MECHANISM_IDS[m]) for m in mechanisms], upsertions=[]))

    def _alter(self, request) -> None:
        for result in self._send(request).results:
            if result.error_code:
                raise error_for_code(result.error_code, result.error_message)

    def _send(self, request):
        return self._manager.run(send, self._manager, request)
