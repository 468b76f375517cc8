"""Who a connection speaks for: its Kafka principal, from the listener it arrived on.

As Kafka's DefaultKafkaPrincipalBuilder:
- PLAINTEXT: `User:ANONYMOUS`;
- SASL_PLAINTEXT / SASL_SSL: `User:<the SASL user>` once logged in;
- SSL: `User:<the client certificate's subject>` (mapped by `ssl.principal.mapping.rules`,
  engine/security/tls_principal.py) when the client sent one, else `User:ANONYMOUS`;
- the brokers' own connections to each other (engine/protocol/inter_broker.py):
  `User:__engine-inter-broker`, which the authorizer counts as a super user.
The principal never changes after the login, so a connection also keeps the authorizer's
answers it has had (`decisions`, engine/security/authorize.py), thrown away when the ACLs change.
One per connection, owned by its listener task.
"""
from __future__ import annotations

from kafka_rules.acls import ANONYMOUS


class ConnectionIdentity:
    __slots__ = ("listener", "session", "established", "decisions", "decisions_version")

    def __init__(self, listener: str = "PLAINTEXT", session=None, established: str | None = None) -> None:
        self.listener = listener               # the listener's name, e.g. PLAINTEXT or INTERNAL
        self.session = session                 # engine/security/session.SaslSession on SASL listeners
        # A principal the connection established before any request: "User:CN=..." from a
        # verified client certificate, or the brokers' own on an inter-broker connection.
        self.established = established
        self.decisions: dict = {}
        self.decisions_version = -1

    @property
    def principal(self) -> str:
        """The Kafka principal, `Type:name`."""
        session = self.session
        if session is not None:
            return f"User:{session.principal}" if session.principal else ANONYMOUS
        return self.established or ANONYMOUS

    @property
    def user(self) -> str:
        """The principal's name: the client-quota `user` entity (KIP-546)."""
        return self.principal.partition(":")[2]
