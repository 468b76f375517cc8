"""A test identity provider for SASL OAUTHBEARER: RSA keys published as a JWKS file, and JWTs
signed with them (or unsigned, for the unsecured validator)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from kafka.net.sasl.oauth import AbstractTokenProvider

ISSUER, AUDIENCE = "https://idp.test", "kafka"


class IdentityProvider:
    def __init__(self, directory: Path) -> None:
        self.jwks = directory / "jwks.json"
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.add_key("key-1")

    @property
    def url(self) -> str:
        return self.jwks.as_uri()

    def add_key(self, kid: str) -> None:
        """A new signing key, published in the JWKS file at once."""
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        document = {"keys": [{**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())), "kid": name,
                              "use": "sig", "alg": "RS256"} for name, key in self.keys.items()]}
        self.jwks.write_text(json.dumps(document))

    def token(self, subject: str, *, kid: str = "key-1", lifetime_s: int = 600, audience: str = AUDIENCE,
              issuer: str = ISSUER, key: rsa.RSAPrivateKey | None = None) -> str:
        now = int(time.time())
        claims = {"sub": subject, "iss": issuer, "aud": audience, "iat": now, "exp": now + lifetime_s}
        return jwt.encode(claims, key or self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def broker_configs(self) -> list[str]:
        """`--config` arguments for a listener that checks tokens against this provider."""
        return ["--config", f"sasl.oauthbearer.jwks.endpoint.url={self.url}",
                "--config", f"sasl.oauthbearer.expected.audience={AUDIENCE}",
                "--config", f"sasl.oauthbearer.expected.issuer={ISSUER}"]


def unsecured_token(subject: str, lifetime_s: int = 600) -> str:
    now = int(time.time())
    return jwt.encode({"sub": subject, "iat": now, "exp": now + lifetime_s}, None, algorithm="none")


class TokenProvider(AbstractTokenProvider):
    """kafka-python's sasl_oauth_token_provider: hands out one fixed token."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token

    def token(self) -> str:
        return self._token
