"""Kafka Connect's REST API, as the console calls it (urllib; any Connect cluster: ours or
Apache Kafka's). Every answer is JSON; an error answer carries Connect's `error_code` and
`message`, which ConnectApiError keeps so a page can show Connect's own sentence.

An unreachable worker, a timeout or an answer that is not JSON is a ConnectUnreachable with a
sentence naming the Connect cluster and its address, never a trace. Answers are capped at
16 MiB (a status page of thousands of connectors fits many times over).
"""
from __future__ import annotations

import base64
import json
import socket
import urllib.error
import urllib.request
from urllib.parse import quote, urlencode

from console.errors import ConsoleError

MAX_ANSWER = 16 << 20


class ConnectUnreachable(ConsoleError):
    """The Connect cluster did not answer (or not with JSON)."""


class ConnectApiError(ConsoleError):
    """Connect answered with an error status and its message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message, kafka_code=f"HTTP {status}")
        self.status = status


def _name(value: str) -> str:
    return quote(value, safe="")


class ConnectClient:
    def __init__(self, *, name: str, url: str, username: str = "", password: str = "", timeout: float = 10.0):
        self.name, self.base = name, url.rstrip("/")
        self.timeout = timeout
        self._auth = ("Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()) if username else None

    def __repr__(self) -> str:          # no credentials in tracebacks or logs
        return f"ConnectClient({self.name!r}, {self.base!r})"

    def call(self, method: str, path: str, body=None, query: dict | list | None = None):
        url = self.base + path + (("?" + urlencode(query, doseq=True)) if query else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"Accept": "application/json", "Content-Type": "application/json"})
        if self._auth:
            request.add_header("Authorization", self._auth)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as error:
            raise self._error(error) from None
        except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ConnectUnreachable(f"Connect cluster {self.name!r} at {self.base} cannot be reached: {reason}.") \
                from None
        if len(raw) > MAX_ANSWER:
            raise ConnectUnreachable(f"Connect cluster {self.name!r} answered with more than 16 MiB.")
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ConnectUnreachable(f"Connect cluster {self.name!r} at {self.base} did not answer with JSON: is it a "
                                     "Kafka Connect REST address?") from None

    def _error(self, error: urllib.error.HTTPError) -> ConsoleError:
        raw = error.read(MAX_ANSWER)
        try:
            message = json.loads(raw).get("message") or error.reason
        except (ValueError, AttributeError):
            message = error.reason
        if error.code == 401 or error.code == 403:
            message = f"Connect cluster {self.name!r} refused the login ({error.code}): check its user and password."
        return ConnectApiError(error.code, str(message))

    # --- Connect's endpoints -----------------------------------------------------------------

    def root(self) -> dict:
        return self.call("GET", "/")

    def connectors(self) -> dict:
        """Every connector with its status and info (`?expand=status&expand=info`)."""
        return self.call("GET", "/connectors", query=[("expand", "status"), ("expand", "info")]) or {}

    def connector(self, name: str) -> dict:
        return self.call("GET", f"/connectors/{_name(name)}")

    def status(self, name: str) -> dict:
        return self.call("GET", f"/connectors/{_name(name)}/status")

    def topics(self, name: str) -> list[str]:
        answer = self.call("GET", f"/connectors/{_name(name)}/topics") or {}
        return list((answer.get(name) or {}).get("topics") or [])

    def offsets(self, name: str) -> list[dict]:
        return list((self.call("GET", f"/connectors/{_name(name)}/offsets") or {}).get("offsets") or [])

    def plugins(self) -> list[dict]:
        return self.call("GET", "/connector-plugins") or []

    def plugin_config(self, plugin: str) -> list[dict]:
        return self.call("GET", f"/connector-plugins/{_name(plugin)}/config") or []

    def validate(self, plugin: str, config: dict) -> dict:
        return self.call("PUT", f"/connector-plugins/{_name(plugin)}/config/validate", config)

    def create(self, name: str, config: dict) -> dict:
        return self.call("POST", "/connectors", {"name": name, "config": config})

    def put_config(self, name: str, config: dict) -> dict:
        """PUT /connectors/{c}/config: the whole config at once (Connect restarts the connector)."""
        return self.call("PUT", f"/connectors/{_name(name)}/config", config)

    def pause(self, name: str) -> None:
        self.call("PUT", f"/connectors/{_name(name)}/pause")

    def resume(self, name: str) -> None:
        self.call("PUT", f"/connectors/{_name(name)}/resume")

    def stop(self, name: str) -> None:
        self.call("PUT", f"/connectors/{_name(name)}/stop")

    def restart(self, name: str, *, include_tasks: bool, only_failed: bool) -> dict | None:
        return self.call("POST", f"/connectors/{_name(name)}/restart",
                         query={"includeTasks": str(include_tasks).lower(), "onlyFailed": str(only_failed).lower()})

    def restart_task(self, name: str, task: int) -> None:
        self.call("POST", f"/connectors/{_name(name)}/tasks/{int(task)}/restart")

    def delete(self, name: str) -> None:
        self.call("DELETE", f"/connectors/{_name(name)}")

    def reset_offsets(self, name: str) -> dict:
        return self.call("DELETE", f"/connectors/{_name(name)}/offsets")
