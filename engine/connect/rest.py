"""Kafka Connect's REST API on a worker, with Connect's paths, JSON and errors
(ConnectorsResource, ConnectorPluginsResource, RootResource).

A change that only the leader may make raises NotLeader on other workers; the request is
then sent on to the leader, as Connect's HerderRequestHandler does: a request without
`forward` is forwarded with `forward=true`, that one once more with `forward=false`, and a
`forward=false` request that still lands on the wrong worker answers 409. Errors are
`{"error_code": N, "message": "..."}`; a body that is not JSON, or a request over 8 MiB, is a
400/413 with a sentence, never a trace. A connection that sends nothing for IDLE_TIMEOUT_S, in
the middle of a request or between two, is closed, as Jetty's idle timeout closes it under
Connect: each connection holds a thread, and a client trickling bytes must not hold it for ever.
"""
from __future__ import annotations

import json
import logging
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

from engine.connect.errors import REBALANCING, BadRequest, ConnectRestError, Conflict, NotFound, NotLeader

log = logging.getLogger("engine.connect.rest")

VERSION = "3.9.0"
COMMIT = "engine-connect"
MAX_BODY = 8 << 20
IDLE_TIMEOUT_S = 30      # Jetty's default idle timeout, which Connect's REST server keeps
_STATES = ("RUNNING", "PAUSED", "STOPPED")


class _Response(Exception):
    def __init__(self, status: int, body=None, headers: dict | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers or {}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A client that went away mid-answer is not an error worth a trace on stderr."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            log.debug("Client %s went away: %s", client_address, error)
        else:
            log.exception("Error while serving %s", client_address)


class RestServer:
    def __init__(self, herder, host: str, port: int) -> None:
        self.herder = herder
        handler = type("Handler", (_Handler,), {"herder": herder})
        self.httpd = _Server((host, port), handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="connect-rest", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    herder = None
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S      # the socket's: a read waiting longer ends the connection
    server_version = "engine-connect"

    def log_message(self, format, *args) -> None:        # noqa: A002 - the base class's name
        log.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        segments = [unquote(s) for s in url.path.strip("/").split("/")] if url.path.strip("/") else []
        try:
            body = self._last_body = self._body()
            result = _route(self.herder, method, segments, query, body)
            status, payload, headers = 200, result, {}
        except _Response as response:
            status, payload, headers = response.status, response.body, response.headers
        except NotLeader as exc:
            status, payload, headers = self._forward(method, url, query, exc)
        except ConnectRestError as exc:
            status, payload, headers = exc.status, exc.body(), {}
        except Exception as exc:        # never a trace to the client; the log has it
            log.exception("Uncaught exception in REST call to %s", self.path)
            status, payload, headers = 500, {"error_code": 500, "message": f"{type(exc).__name__}: {exc}"}, {}
        self._send(status, payload, headers)

    def _body(self):
        """The request's JSON; a 400 with a sentence for a Content-Length that is not a byte count,
        a body that is not JSON, and JSON nested deeper than the parser goes (as Jackson refuses
        documents past its nesting limit); a 413 past MAX_BODY."""
        declared = self.headers.get("Content-Length") or "0"
        if not declared.strip().isdigit():
            raise _Response(400, {"error_code": 400, "message": f"Content-Length {declared[:40]!r} is not a number "
                                                                "of bytes"})
        length = int(declared)
        if length > MAX_BODY:
            raise _Response(413, {"error_code": 413, "message": f"Request body of {length} bytes is over the "
                                                                f"{MAX_BODY} byte limit"})
        if not length:
            return None
        raw = self.rfile.read(length)
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise _Response(400, {"error_code": 400, "message": f"Request body is not valid JSON: {exc}"}) from None
        except RecursionError:
            raise _Response(400, {"error_code": 400, "message": "Request body is not valid JSON: it is nested too "
                                                                "deeply"}) from None

    def _forward(self, method: str, url, query: dict, exc: NotLeader):
        forward = (query.get("forward") or [None])[0]
        if (forward is not None and forward.lower() == "false") or not exc.url:
            conflict = Conflict(REBALANCING)
            return conflict.status, conflict.body(), {}
        params = {k: v for k, v in query.items() if k != "forward"}
        params["forward"] = ["false" if forward is not None else "true"]
        target = exc.url.rstrip("/") + url.path + "?" + "&".join(f"{k}={quote(v)}" for k, vs in params.items()
                                                                 for v in vs)
        body = getattr(self, "_last_body", None)
        data = json.dumps(body).encode() if body is not None and method in ("POST", "PUT", "PATCH") else None
        request = urllib.request.Request(target, data=data, method=method,
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        log.debug("Forwarding %s %s to the leader at %s", method, url.path, exc.url)
        try:
            with urllib.request.urlopen(request, timeout=90) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None, _location(response)
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw), {}
            except ValueError:
                return error.code, {"error_code": error.code, "message": raw.decode(errors="replace")}, {}
        except OSError as error:
            return 500, {"error_code": 500, "message": f"IO Error trying to forward REST request: {error}"}, {}

    def _send(self, status: int, payload, headers: dict) -> None:
        data = b"" if payload is None or status == 204 else json.dumps(payload).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)


def _location(response) -> dict:
    location = response.headers.get("Location")
    return {"Location": location} if location else {}


def _flag(query: dict, name: str) -> bool:
    value = (query.get(name) or ["false"])[0].lower()
    if value not in ("true", "false"):
        raise BadRequest(f"Query parameter {name} must be true or false, not {value!r}")
    return value == "true"


def _config_map(body, what: str = "Connector configuration") -> dict:
    if not isinstance(body, dict):
        raise BadRequest(f"{what} must be a JSON object of string values")
    out = {}
    for key, value in body.items():
        if isinstance(value, (dict, list)):
            raise BadRequest(f"{what}: the value of {key} must be a string, not a JSON {type(value).__name__}")
        out[str(key)] = value if value is None or isinstance(value, str) else \
            (str(value).lower() if isinstance(value, bool) else str(value))
    return out


def _named(name: str, config: dict) -> dict:
    included = config.get("name")
    if included is not None and included != name:
        raise BadRequest(f"Connector name configuration ({included}) doesn't match connector name in the URL "
                         f"({name})")
    config["name"] = name
    return config


def _route(herder, method: str, s: list[str], query: dict, body):
    """Dispatch by method and path segments; the value returned is the 200 body."""
    n = len(s)
    if n == 0 and method == "GET":
        return {"version": VERSION, "commit": COMMIT, "kafka_cluster_id": herder.kafka_cluster_id}
    if s[:1] == ["connector-plugins"]:
        return _plugins(herder, method, s, query, body)
    if s[:1] != ["connectors"]:
        raise ConnectRestError("HTTP 404 Not Found", 404)
    if n == 1:
        if method == "GET":
            return _list(herder, query)
        if method == "POST":
            return _create(herder, body)
        raise _not_allowed()
    name = s[1]
    if n == 2:
        if method == "GET":
            return herder.connector_info(name)
        if method == "DELETE":
            herder.delete_connector(name)
            raise _Response(204)
        raise _not_allowed()
    action = s[2]
    if n == 3 and action == "config":
        if method == "GET":
            return herder.connector_config(name)
        if method == "PUT":
            created, info = herder.put_connector_config(name, _named(name, _config_map(body)), allow_replace=True)
            if created:
                raise _Response(201, info, {"Location": f"/connectors/{quote(name, safe='')}"})
            return info
        if method == "PATCH":
            return herder.patch_connector_config(name, _config_map(body, "Connector configuration patch"))
        raise _not_allowed()
    if n == 3 and action == "status" and method == "GET":
        return herder.connector_status(name)
    if n == 3 and action == "restart" and method == "POST":
        include, only = _flag(query, "includeTasks"), _flag(query, "onlyFailed")
        status = herder.restart_connector(name, include_tasks=include, only_failed=only)
        raise _Response(204) if status is None else _Response(202, status)
    if n == 3 and action in ("pause", "resume", "stop") and method == "PUT":
        getattr(herder, f"{action}_connector")(name)
        raise _Response(204 if action == "stop" else 202)
    if n == 3 and action == "tasks":
        if method == "GET":
            return herder.task_configs(name)
        if method == "POST":          # internal: a worker forwards its connector's task configs
            if not isinstance(body, list) or not all(isinstance(c, dict) for c in body):
                raise BadRequest("Task configurations must be a JSON list of objects")
            herder.put_task_configs(name, body)
            raise _Response(204)
        raise _not_allowed()
    if n == 5 and action == "tasks":
        try:
            task = int(s[3])
        except ValueError:
            raise NotFound("HTTP 404 Not Found") from None
        if s[4] == "status" and method == "GET":
            return herder.task_status(name, task)
        if s[4] == "restart" and method == "POST":
            herder.restart_task(name, task)
            raise _Response(204)
        raise _not_allowed()
    if n == 3 and action == "topics" and method == "GET":
        return herder.active_topics(name)
    if n == 4 and action == "topics" and s[3] == "reset" and method == "PUT":
        herder.reset_active_topics(name)
        raise _Response(202)
    if n == 3 and action == "offsets":
        if method == "GET":
            return herder.connector_offsets(name)
        if method == "PATCH":
            offsets = body.get("offsets") if isinstance(body, dict) else None
            if not offsets or not isinstance(offsets, list):
                raise BadRequest("Partitions / offsets need to be provided for an alter offsets request")
            return herder.alter_offsets(name, offsets)
        if method == "DELETE":
            return herder.reset_offsets(name)
        raise _not_allowed()
    raise ConnectRestError("HTTP 404 Not Found", 404)


def _not_allowed() -> ConnectRestError:
    return ConnectRestError("HTTP 405 Method Not Allowed", 405)


def _list(herder, query: dict):
    expand = query.get("expand")
    if not expand:
        return herder.connectors()
    out = {}
    for name in herder.connectors():
        entry = {}
        for kind in expand:
            try:
                if kind == "status":
                    entry["status"] = herder.connector_status(name)
                elif kind == "info":
                    entry["info"] = herder.connector_info(name)
            except NotFound:
                continue
        out[name] = entry
    return out


def _create(herder, body):
    if not isinstance(body, dict):
        raise BadRequest("Request body must be a JSON object with \"name\" and \"config\"")
    name = str(body.get("name") or "").strip()
    config = _config_map(body.get("config") if body.get("config") is not None else {})
    state = body.get("initial_state")
    if state is not None and state not in _STATES:
        raise BadRequest(f"Invalid initial_state {state!r}: use one of {', '.join(_STATES)}")
    created, info = herder.put_connector_config(name, _named(name, config), allow_replace=False, initial_state=state)
    raise _Response(201, info, {"Location": f"/connectors/{quote(name, safe='')}"})


def _plugins(herder, method: str, s: list[str], query: dict, body):
    if len(s) == 1 and method == "GET":
        only = (query.get("connectorsOnly") or ["true"])[0].lower() != "false"
        plugins = herder.plugins.connector_plugins() if only else herder.plugins.all_plugins()
        return [p.info() for p in plugins]
    if len(s) == 3 and s[2] == "config" and method == "GET":
        return herder.plugin_config(s[1])
    if len(s) == 4 and s[2:] == ["config", "validate"] and method == "PUT":
        config = _config_map(body)
        included = config.get("connector.class")
        if included is not None and not _normalized(included).endswith(_normalized(s[1])):
            raise BadRequest(f"Included connector type {included} does not match request type {s[1]}")
        if included is None:
            config["connector.class"] = s[1]
        return herder.validate(config)
    if len(s) in (3, 4):
        raise _not_allowed()
    raise ConnectRestError("HTTP 404 Not Found", 404)


def _normalized(name: str) -> str:
    return name[:-len("Connector")] if name.endswith("Connector") and len(name) > len("Connector") else name
