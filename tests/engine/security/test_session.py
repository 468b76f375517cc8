"""One connection's SASL session (engine/security/session.py): its lifetime and re-authentication
(KIP-368), as Kafka's SaslServerAuthenticator and KafkaChannel decide them, on the test's clock."""
from __future__ import annotations

import struct
import time

import pytest

from engine.security import oauthbearer
from engine.security import settings as S
from engine.security.session import (AUTHENTICATE, COMPLETE, FAILED, HANDSHAKE, MIN_REAUTH_INTERVAL_S,
                                     AuthenticationFailed, SaslSession)

HANDSHAKE_V1 = struct.pack(">hhi", 17, 1, 1)
HANDSHAKE_V0 = struct.pack(">hhi", 17, 0, 1)
METADATA = struct.pack(">hhi", 3, 12, 1)


class Tokens:
    """An OAUTHBEARER validator whose tokens are `principal:seconds-left`."""

    def validate(self, token: str) -> oauthbearer.ValidToken:
        principal, _, seconds = token.partition(":")
        return oauthbearer.ValidToken(principal, int((time.time() + float(seconds)) * 1000))

    def close(self) -> None:
        pass


def settings(tmp_path, **max_reauth_ms) -> S.SecuritySettings:
    users = tmp_path / "users"
    users.write_text("user_alice=a\nuser_bob=b\n")
    configs = {"sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
               **{(f"{k.lower()}." if k != "default" else "") + S.MAX_REAUTH_CONFIG: str(v)
                  for k, v in max_reauth_ms.items()}}
    built = S.build("SASL_PLAINTEXT", configs, str(users))
    built.oauth.close()
    built.oauth = Tokens()
    return built


def plain(session: SaslSession, user: str = "alice", password: str = "a", version: int = 2) -> bytes:
    assert session.handshake("PLAIN")
    return session.authenticate(f"\0{user}\0{password}".encode(), version)


def bearer(session: SaslSession, token: str) -> bytes:
    assert session.handshake("OAUTHBEARER")
    return session.authenticate(f"n,,\x01auth=Bearer {token}\x01\x01".encode(), 2)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def session_of(tmp_path, clock: Clock | None = None, **max_reauth_ms) -> SaslSession:
    return SaslSession(settings(tmp_path, **max_reauth_ms), clock=clock or Clock())


def counts(session: SaslSession) -> dict[str, int]:
    stats = session.stats
    return {"ok": stats.successful_reauthentication, "failed": stats.failed_reauthentication,
            "no_reauth": stats.successful_authentication_no_reauth, "killed": stats.expired_connections_killed}


def test_without_connections_max_reauth_ms_a_plain_session_never_ends(tmp_path):
    clock = Clock()
    session = session_of(tmp_path, clock)
    plain(session)
    assert (session.state, session.session_lifetime_ms, session.expires_at) == (COMPLETE, 0, None)
    assert not session.expired(HANDSHAKE_V1) and session.state == COMPLETE     # answered ILLEGAL_SASL_STATE
    clock.now += 10 ** 6
    assert not session.expired(METADATA)


@pytest.mark.parametrize("max_reauth_ms, token_s, lifetime", [
    (2000, 600, (2000, 2000)),            # the config is sooner than the token's expiry
    (600_000, 30, (25_000, 30_000)),      # the token's expiry is sooner
    (0, 30, (25_000, 30_000)),            # off: the token's expiry still ends it (Kafka since 3.3, KAFKA-13848)
    (0, -5, (0, 0)),                      # expired within the clock skew's leeway: over at once
])
def test_an_oauthbearer_session_ends_at_the_sooner_of_the_config_and_the_token(tmp_path, max_reauth_ms, token_s,
                                                                                lifetime):
    clock = Clock()
    session = session_of(tmp_path, clock, oauthbearer=max_reauth_ms)
    bearer(session, f"alice:{token_s}")
    low, high = lifetime
    assert low <= session.session_lifetime_ms <= high
    assert session.expires_at == clock.now + session.session_lifetime_ms / 1000


def test_the_mechanisms_own_config_wins_over_the_listeners(tmp_path):
    session = session_of(tmp_path, default=2000, plain=500)
    plain(session)
    assert session.session_lifetime_ms == 500


def test_after_the_end_every_request_but_a_handshake_v1_is_refused_and_counted(tmp_path):
    clock = Clock()
    session = session_of(tmp_path, clock, default=2000)
    plain(session)
    clock.now = session.expires_at
    assert not session.expired(METADATA)                        # Kafka: expired once past the end
    clock.now += 0.001
    assert session.expired(METADATA)
    assert session.expired(HANDSHAKE_V0)                        # no re-authentication with bare tokens
    assert counts(session)["killed"] == 2


def test_a_re_authentication_as_the_same_principal_renews_the_session(tmp_path):
    clock = Clock()
    session = session_of(tmp_path, clock, default=2000)
    plain(session)
    clock.now = session.expires_at + 60
    assert not session.expired(HANDSHAKE_V1)                    # begins, even after the end, as Kafka's
    assert (session.state, session.reauthenticating, session.principal) == (HANDSHAKE, True, "alice")
    assert session.refusal(HANDSHAKE_V1) is None
    clock.now += 0.25
    plain(session)
    assert (session.state, session.principal, session.session_lifetime_ms) == (COMPLETE, "alice", 2000)
    assert session.expires_at == clock.now + 2
    assert not session.reauthenticating and counts(session) == {"ok": 1, "failed": 0, "no_reauth": 0, "killed": 0}
    assert session.stats.reauthentication_latency_ms.total == pytest.approx(250)
    # no second start within a second of the last: the handshake is answered as on any logged-in connection
    clock.now += MIN_REAUTH_INTERVAL_S / 2
    assert not session.expired(HANDSHAKE_V1) and session.state == COMPLETE
    clock.now += MIN_REAUTH_INTERVAL_S / 2
    assert not session.expired(HANDSHAKE_V1) and session.state == HANDSHAKE


@pytest.mark.parametrize("again, message", [
    (lambda s: plain(s, "bob", "b"), "Cannot change principals during re-authentication from User.alice: User.bob"),
    (lambda s: plain(s, "alice", "wrong"),
     "Authentication failed during re-authentication due to invalid credentials with SASL mechanism PLAIN"),
    (lambda s: bearer(s, "alice:600"),
     "SASL mechanism 'OAUTHBEARER' requested by client is not supported for re-authentication of mechanism 'PLAIN'"),
])
def test_a_re_authentication_that_changes_anything_fails(tmp_path, again, message):
    session = session_of(tmp_path, default=2000)
    plain(session)
    session.expired(HANDSHAKE_V1)
    with pytest.raises(AuthenticationFailed) as failed:
        again(session)
    assert str(failed.value) == message and session.state == FAILED and session.principal == "alice"
    assert counts(session)["failed"] == 1


def test_a_request_other_than_saslauthenticate_during_re_authentication_fails_it(tmp_path):
    session = session_of(tmp_path, default=2000)
    plain(session)
    session.expired(HANDSHAKE_V1)
    assert session.handshake("PLAIN") and session.state == AUTHENTICATE
    assert "during SASL re-authentication" in session.refusal(METADATA)
    assert session.state == FAILED and counts(session)["failed"] == 1


def test_a_disabled_mechanism_fails_the_re_authentication(tmp_path):
    session = session_of(tmp_path, default=2000)
    plain(session)
    session.expired(HANDSHAKE_V1)
    assert not session.handshake("SCRAM-SHA-256")
    assert session.state == FAILED and counts(session)["failed"] == 1


def test_clients_that_cannot_re_authenticate_are_counted(tmp_path):
    old = session_of(tmp_path, default=2000)
    plain(old, version=0)                       # SaslAuthenticate v0: never told the lifetime, closed all the same
    assert old.expires_at is not None and counts(old)["no_reauth"] == 1
    new = session_of(tmp_path, default=2000)
    plain(new, version=1)
    assert counts(new)["no_reauth"] == 0
