"""A thin client of Confluent's schema registry REST API (requests), for one registry.

Every failure is a RegistryError (a ConsoleError) that reads as a sentence: the registry's
own message with its error code (`SCHEMA_REGISTRY 42201`) in the small print, or "does not
answer" with the URL. Credentials go in the Authorization header only, never in a message.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from urllib.parse import quote

import requests

from console.errors import ConsoleError, NotFound

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class RegistryError(ConsoleError):
    """The registry's refusal: its own sentence, which names its error code as the console's Kafka
    sentences name theirs (the code also goes to the audit log's `kafka_code`)."""

    def __init__(self, message: str, *, error_code: int | None = None, status: int | None = None) -> None:
        code = f"schema registry error {error_code}" if error_code else None
        super().__init__(f"{message.rstrip('.')} ({code})." if code else message, kafka_code=code)
        self.error_code = error_code
        self.status = status


class RegistryNotFound(RegistryError, NotFound):
    pass


class RegistryUnreachable(RegistryError):
    """No answer at all (refused, timed out, no route): the registry, not the request, is the
    problem, so a page asks again only after a pause (console/schema_registry/resolver.py)."""


@dataclass(frozen=True)
class RegistryClient:
    url: str
    authorization: str = field(default="", repr=False)
    timeout: float = 10.0

    @classmethod
    def with_basic(cls, url: str, username: str, password: str, timeout: float = 10.0) -> "RegistryClient":
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        return cls(url.rstrip("/"), f"Basic {token}", timeout)

    @classmethod
    def with_bearer(cls, url: str, token: str, timeout: float = 10.0) -> "RegistryClient":
        return cls(url.rstrip("/"), f"Bearer {token}", timeout)

    def call(self, method: str, path: str, body=None, params: dict | None = None):
        headers = {"Accept": CONTENT_TYPE, "Content-Type": CONTENT_TYPE}
        if self.authorization:
            headers["Authorization"] = self.authorization
        try:
            response = requests.request(method, self.url.rstrip("/") + path, json=body, params=params,
                                        headers=headers, timeout=self.timeout, allow_redirects=False)
        except requests.RequestException as exc:
            raise RegistryUnreachable(f"The schema registry at {self.url} does not answer ({type(exc).__name__}).") \
                from None
        try:
            answer = response.json()
        except ValueError:
            answer = response.text
        if response.status_code >= 400:
            raise _error(response.status_code, answer, self.url)
        return answer

    # -- paths ----------------------------------------------------------------------------

    def subjects(self, deleted: bool = False) -> list[str]:
        return self.call("GET", "/subjects", params={"deleted": "true"} if deleted else None)

    def versions(self, subject: str, deleted: bool = False) -> list[int]:
        return self.call("GET", f"/subjects/{_q(subject)}/versions", params={"deleted": "true"} if deleted else None)

    def version(self, subject: str, version: int | str = "latest", deleted: bool = False) -> dict:
        return self.call("GET", f"/subjects/{_q(subject)}/versions/{version}",
                         params={"deleted": "true"} if deleted else None)

    def schema(self, schema_id: int) -> dict:
        return self.call("GET", f"/schemas/ids/{int(schema_id)}")

    def schema_versions(self, schema_id: int) -> list[dict]:
        return self.call("GET", f"/schemas/ids/{int(schema_id)}/versions")

    def config(self, subject: str | None = None) -> str:
        if subject is None:
            return self.call("GET", "/config")["compatibilityLevel"]
        return self.call("GET", f"/config/{_q(subject)}", params={"defaultToGlobal": "true"})["compatibilityLevel"]

    def subject_config(self, subject: str) -> str | None:
        """The subject's own level, None when it follows the global one."""
        try:
            return self.call("GET", f"/config/{_q(subject)}")["compatibilityLevel"]
        except RegistryError as exc:
            if exc.error_code == 40408 or exc.status == 404:
                return None
            raise

    def mode(self, subject: str | None = None) -> str:
        if subject is None:
            return self.call("GET", "/mode")["mode"]
        return self.call("GET", f"/mode/{_q(subject)}", params={"defaultToGlobal": "true"})["mode"]

    def set_config(self, subject: str | None, level: str) -> dict:
        return self.call("PUT", "/config" if subject is None else f"/config/{_q(subject)}", {"compatibility": level})

    def set_mode(self, subject: str | None, mode: str) -> dict:
        return self.call("PUT", "/mode" if subject is None else f"/mode/{_q(subject)}", {"mode": mode})

    def test_compatibility(self, subject: str, body: dict) -> dict:
        return self.call("POST", f"/compatibility/subjects/{_q(subject)}/versions/latest", body,
                         params={"verbose": "true"})

    def register(self, subject: str, body: dict) -> dict:
        return self.call("POST", f"/subjects/{_q(subject)}/versions", body)

    def delete_subject(self, subject: str, permanent: bool) -> list[int]:
        return self.call("DELETE", f"/subjects/{_q(subject)}", params={"permanent": "true"} if permanent else None)

    def delete_version(self, subject: str, version: int, permanent: bool) -> int:
        return self.call("DELETE", f"/subjects/{_q(subject)}/versions/{int(version)}",
                         params={"permanent": "true"} if permanent else None)


def _q(subject: str) -> str:
    return quote(subject, safe="")


def _error(status: int, answer, url: str) -> RegistryError:
    if isinstance(answer, dict) and isinstance(answer.get("message"), str):
        code = answer.get("error_code") if isinstance(answer.get("error_code"), int) else None
        cls = RegistryNotFound if status == 404 else RegistryError
        return cls(answer["message"], error_code=code, status=status)
    if status in (401, 403):
        return RegistryError(f"The schema registry at {url} refused the console's credentials (HTTP {status}): "
                             "check the registry settings of this cluster.", status=status)
    return RegistryError(f"The schema registry at {url} answered HTTP {status}.", status=status)
