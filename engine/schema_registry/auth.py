"""Who may call the registry: HTTP basic auth against the console's users, or bearer tokens.

Without `--auth-url` and `--token-file` the registry is open, as Confluent's is by default.
With either, every request needs an `Authorization` header:
- `Basic ...`: the registry asks the console (`--auth-url`, e.g. http://127.0.0.1:8000)
  `GET /api/whoami` with the same header; the console checks the password (its lockouts
  included) and answers the user's role. Answers are kept `CACHE_SECONDS` per header (by
  its SHA-256, never in clear), so a stream of requests costs one console call a minute;
- `Bearer T`: T must be a line of the token file, `TOKEN` (full access) or `ROLE TOKEN`.
Viewers read; operators and admins also write. A missing or wrong credential is 401 (with
`WWW-Authenticate: Basic`), a viewer's write 403. Credentials are never logged.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import time
from pathlib import Path

import aiohttp

log = logging.getLogger(__name__)
ROLES = ("viewer", "operator", "admin")
WRITERS = ("operator", "admin")
CACHE_SECONDS = 60.0


class AuthError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def load_tokens(path: Path) -> dict[str, str]:
    """Token -> role from the token file; created with one random full-access token if missing."""
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(f"admin {secrets.token_urlsafe(32)}\n")
    tokens: dict[str, str] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        role, token = (parts[0], parts[1]) if len(parts) == 2 else ("admin", parts[0])
        if role not in ROLES:
            raise ValueError(f"{path}: unknown role {role!r} (expected one of {', '.join(ROLES)})")
        tokens[token] = role
    return tokens


class Authenticator:
    def __init__(self, *, auth_url: str | None = None, tokens: dict[str, str] | None = None) -> None:
        self.auth_url = auth_url.rstrip("/") if auth_url else None
        self.tokens = tokens or {}
        self._cache: dict[str, tuple[float, str | None]] = {}
        self._session: aiohttp.ClientSession | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.auth_url or self.tokens)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def role(self, header: str | None) -> str:
        """The caller's role, or AuthError(401)."""
        if not self.enabled:
            return "admin"
        if not header:
            raise AuthError(401, "Unauthorized: send HTTP basic credentials or a bearer token")
        scheme, _, credential = header.partition(" ")
        if scheme.lower() == "bearer" and self.tokens:
            for token, role in self.tokens.items():
                if hmac.compare_digest(token.encode(), credential.strip().encode()):
                    return role
            raise AuthError(401, "Unauthorized: unknown bearer token")
        if scheme.lower() == "basic" and self.auth_url:
            role = await self._console_role(header)
            if role in ROLES:
                return role
            raise AuthError(401, "Unauthorized: wrong user name or password, or no console role")
        raise AuthError(401, "Unauthorized: this registry does not accept that kind of credential")

    async def _console_role(self, header: str) -> str | None:
        key = hashlib.sha256(header.encode()).hexdigest()
        cached = self._cache.get(key)
        now = time.monotonic()
        if cached is not None and now - cached[0] < CACHE_SECONDS:
            return cached[1]
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        try:
            async with self._session.get(f"{self.auth_url}/api/whoami", headers={"Authorization": header},
                                         allow_redirects=False) as response:
                role = (await response.json()).get("role") if response.status == 200 else None
        except (aiohttp.ClientError, ValueError, TimeoutError) as exc:
            log.warning("Cannot ask the console who a caller is (%s): %s", self.auth_url, type(exc).__name__)
            raise AuthError(503, "The console that checks credentials cannot be reached") from None
        if len(self._cache) > 10000:
            self._cache.clear()
        self._cache[key] = (now, role)
        return role


def may_write(role: str) -> bool:
    return role in WRITERS
