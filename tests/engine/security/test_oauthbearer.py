"""SASL OAUTHBEARER's token checks (engine/security/oauthbearer.py): RFC 7628 messages, signed
tokens against a JWKS, unsigned ones for the unsecured validator."""
from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from engine.security.oauthbearer import (JwksValidator, TokenRejected, UnsecuredValidator, bearer_token,
                                         validator)
from tests.support.oauth import AUDIENCE, ISSUER, IdentityProvider, unsecured_token
from tests.support.waiting import wait_until


def message(token: str, extensions: str = "") -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01{extensions}\x01".encode()


def test_the_token_is_read_from_the_clients_message():
    assert bearer_token(message("abc.def.ghi")) == "abc.def.ghi"
    assert bearer_token(b"n,a=alice,\x01auth=Bearer t\x01traceId=123\x01\x01") == "t"
    for bad in (b"auth=Bearer t", b"n,,\x01auth=Basic t\x01\x01", b"n,,\x01auth=Bearer t\x01", b"\xff\xfe"):
        with pytest.raises(TokenRejected):
            bearer_token(bad)


@pytest.fixture
def provider(tmp_path):
    return IdentityProvider(tmp_path)


@pytest.fixture
def checker(provider):
    checking = validator({"sasl.oauthbearer.jwks.endpoint.url": provider.url,
                          "sasl.oauthbearer.expected.audience": f"other,{AUDIENCE}",
                          "sasl.oauthbearer.expected.issuer": ISSUER,
                          "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": "10"})
    assert isinstance(checking, JwksValidator)
    yield checking
    checking.close()


def test_a_signed_token_names_its_principal_and_bad_ones_are_refused(provider, checker):
    token = provider.token("alice", lifetime_s=300)
    valid = checker.validate(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert valid == ("alice", claims["exp"] * 1000)          # the principal, and `exp` in ms for KIP-368
    refusals = {
        "expired": provider.token("alice", lifetime_s=-120),
        "not valid": provider.token("alice", audience="somebody-else"),
        "issuer": provider.token("alice", issuer="https://evil.test"),
        "signature": provider.token("alice", key=rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        "unsecured": unsecured_token("alice"),
    }
    for reason, token in refusals.items():
        with pytest.raises(TokenRejected) as refused:
            checker.validate(token)
        assert token not in str(refused.value), reason


def test_a_new_key_is_fetched_when_a_token_names_it(provider, checker):
    provider.add_key("key-2")
    fresh = provider.token("bob", kid="key-2")
    with pytest.raises(TokenRejected, match="no key with the token's kid 'key-2'"):
        checker.validate(fresh)                      # and the refresh is brought forward

    def accepted() -> bool:
        try:
            return checker.validate(fresh).principal == "bob"
        except TokenRejected:
            return False
    wait_until(accepted, timeout=10, message="the new key fetched")


def test_the_unsecured_validator_takes_unsigned_tokens_only():
    checking = validator({"sasl.oauthbearer.sub.claim.name": "sub"})
    assert isinstance(checking, UnsecuredValidator)
    assert checking.validate(unsecured_token("carol")).principal == "carol"
    with pytest.raises(TokenRejected, match="expired"):
        checking.validate(unsecured_token("carol", lifetime_s=-120))
    with pytest.raises(TokenRejected, match="no 'sub' claim"):
        UnsecuredValidator("sub", 30).validate(unsecured_token(""))


def test_an_unreachable_jwks_stops_the_start(tmp_path):
    with pytest.raises(OSError):
        validator({"sasl.oauthbearer.jwks.endpoint.url": (tmp_path / "missing.json").as_uri()})
