"""The bundled engine's admin interface (HTTP), the one thing here that is not Kafka.

Kafka has no API to stop or start a broker. Our engine offers one over HTTP and advertises
where with the read-only broker config `engine.admin.endpoint`; a cluster that does not
advertise it (Apache Kafka) simply has no stop/start buttons. Every request carries the
header `X-Engine-Admin-Token` (engine/admin_token.py); the token never appears in a message here.
See engine/admin_server.py:

    GET  /brokers              -> [{"id", "host", "port", "running"}, ...]
    POST /brokers/<id>/stop    -> {"id", "host", "port", "running", "changed"}
    POST /brokers/<id>/start
    GET  /share-partitions[?group=G] -> share partitions (of one group), with counts and counters
"""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from console.kafka_gateway.errors import GatewayError
from console.kafka_gateway.records import EngineBroker, EngineBrokerChange

ADMIN_ENDPOINT_CONFIG = "engine.admin.endpoint"
ACTIONS = ("stop", "start")


TOKEN_HEADER = "X-Engine-Admin-Token"


def list_brokers(endpoint: str, *, token: str, timeout: float) -> list[EngineBroker]:
    return [_broker(item) for item in _call(endpoint, "GET", "/brokers", token=token, timeout=timeout)]


def broker_command(endpoint: str, broker_id: int, action: str, *, token: str, timeout: float) -> EngineBrokerChange:
    if action not in ACTIONS:
        raise ValueError(f"unknown broker action {action!r}")
    answer = _call(endpoint, "POST", f"/brokers/{int(broker_id)}/{action}", token=token, timeout=timeout)
    return EngineBrokerChange(broker=_broker(answer), changed=bool(answer.get("changed", True)))


def share_partitions(endpoint: str, group_id: str | None, *, token: str, timeout: float) -> list[dict]:
    """The rows of GET /share-partitions (see engine/admin_server.py), of one share group or all."""
    query = f"?{urllib.parse.urlencode({'group': group_id})}" if group_id is not None else ""
    answer = _call(endpoint, "GET", f"/share-partitions{query}", token=token, timeout=timeout)
    if not isinstance(answer, list):
        raise GatewayError("The engine's admin interface answered share partitions in an unexpected shape.")
    return answer


def _broker(item: dict) -> EngineBroker:
    return EngineBroker(node_id=int(item["id"]), host=str(item["host"]), port=int(item["port"]),
                        running=bool(item["running"]))


def _call(endpoint: str, method: str, path: str, *, token: str, timeout: float):
    url = endpoint.rstrip("/") + path
    if not url.startswith(("http://", "https://")):
        url = "http://" + url
    headers = {TOKEN_HEADER: token} if token else {}
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            reason = exc.reason
        if exc.code == 401:
            reason = (f"{reason}. The console has {'a wrong' if token else 'no'} admin token for it: set "
                      "ENGINE_ADMIN_TOKEN (or ENGINE_ADMIN_TOKEN_FILE) for the bundled engine, or the "
                      "cluster's admin token variable")
        raise GatewayError(f"The engine's admin interface refused {method} {path}: {reason}") from None
    except (OSError, ValueError) as exc:
        raise GatewayError(f"The engine's admin interface at {endpoint} did not answer: {exc}") from None
