"""Confluent Schema Registry's REST API on aiohttp.

Reads are answered by any instance from its own Store. Writes (register, deletes, PUT and
DELETE of config and mode) run on the primary; another instance forwards the request as it
came (method, path, query, body, Authorization) and, once the primary answered, reads
`_schemas` up to its end, so the caller's next read on this instance sees the write.
Answers carry `Content-Type: application/vnd.schemaregistry.v1+json`; errors are
`{"error_code": N, "message": "..."}` with Confluent's codes, never a traceback.
"""
from __future__ import annotations

import asyncio
import json
import logging
import ssl

import aiohttp
from aiohttp import web

from engine.schema_registry import auth, errors, queries, requests
from engine.schema_registry.election import Election
from engine.schema_registry.kafka_store import KafkaStore
from engine.schema_registry.registry import Registry

log = logging.getLogger(__name__)
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
FORWARDED = "X-Registry-Forwarded"
MAX_BODY = 16 * 1024 * 1024
BODY_TYPES = (CONTENT_TYPE, "application/vnd.schemaregistry+json", "application/json", "application/octet-stream")
STORE, REGISTRY, KAFKA, ELECTION, AUTH, CLIENT_SSL, PRIMARY_WAIT = (
    web.AppKey(n) for n in ("store", "registry", "kafka", "election", "auth", "client_ssl", "primary_wait"))


def reply(body, status: int = 200) -> web.Response:
    return web.Response(status=status, body=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(), content_type=CONTENT_TYPE)


def error_reply(status: int, code: int, message: str) -> web.Response:
    return reply({"error_code": code, "message": message}, status)


def is_write(request: web.Request) -> bool:
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return False
    path = request.path
    if request.method == "POST" and (path.startswith("/compatibility/") or
                                     (path.startswith("/subjects/") and path.count("/") == 2)):
        return False   # a lookup and a compatibility test only read
    return True


@web.middleware
async def error_middleware(request: web.Request, handler):
    try:
        return await handler(request)
    except errors.RegistryError as exc:
        return reply(exc.body(), exc.status)
    except auth.AuthError as exc:
        response = error_reply(exc.status, exc.status, exc.message)
        if exc.status == 401:
            response.headers["WWW-Authenticate"] = 'Basic realm="schema-registry"'
        return response
    except web.HTTPRequestEntityTooLarge:
        return error_reply(413, errors.SCHEMA_TOO_LARGE, f"The request body is larger than {MAX_BODY} bytes")
    except web.HTTPException as exc:
        return error_reply(exc.status, exc.status, f"HTTP {exc.status} {exc.reason}")
    except Exception:   # the last line of defence: a sentence, never a traceback
        log.exception("Unexpected error answering %s %s", request.method, request.path)
        return error_reply(500, 500, "Internal Server Error")


@web.middleware
async def auth_middleware(request: web.Request, handler):
    role = await request.app[AUTH].role(request.headers.get("Authorization"))
    if is_write(request) and not auth.may_write(role):
        raise auth.AuthError(403, "Forbidden: viewers may only read the registry")
    return await handler(request)


async def body_of(request: web.Request):
    """The request's JSON; a readable 400 for bytes that are not JSON, and for JSON nested
    deeper than the parser's recursion limit (a body of 100,000 `[`), as Jackson refuses
    documents nested past its depth limit. A body of another media type than the registry
    reads is a 415, as Confluent's REST layer answers (a request without one counts as
    application/octet-stream there, and here: aiohttp reports it so)."""
    if request.content_type not in BODY_TYPES:
        raise errors.RegistryError(415, 415, f"HTTP 415 Unsupported Media Type: the registry reads "
                                             f"{', '.join(BODY_TYPES)}, not {request.content_type}")
    raw = await request.read()
    try:
        return json.loads(raw) if raw.strip() else {}
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.RegistryError(400, 400, f"The request body is not JSON: {exc}") from None
    except RecursionError:
        raise errors.RegistryError(400, 400, "The request body is not JSON the registry reads: it is nested "
                                             "too deeply") from None


async def forward_or(request: web.Request, local):
    """Run `local()` on the primary; elsewhere, hand the request to the primary."""
    election = request.app[ELECTION]
    primary = await election.wait_for_primary(request.app[PRIMARY_WAIT])
    if primary is None:
        raise errors.unknown_leader()
    if election.is_primary:
        return reply(await local())
    if request.headers.get(FORWARDED):
        raise errors.unknown_leader()   # two instances disagree on the primary: refuse, never loop
    headers = {FORWARDED: "1", "Content-Type": request.headers.get("Content-Type", CONTENT_TYPE)}
    if "Authorization" in request.headers:
        headers["Authorization"] = request.headers["Authorization"]
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
            async with session.request(request.method, primary.url + request.path_qs, data=await request.read(),
                                       headers=headers, ssl=request.app[CLIENT_SSL]) as answer:
                status, body = answer.status, await answer.read()
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        raise errors.forwarding_failed(f"Error while forwarding the request to the leader {primary.url}: "
                                       f"{type(exc).__name__}") from None
    if status < 300:
        try:
            await request.app[KAFKA].catch_up(10)
        except asyncio.TimeoutError:
            log.warning("A forwarded write is not read back yet")
    return web.Response(status=status, body=body, content_type=CONTENT_TYPE)


def _subject(request: web.Request) -> str:
    return requests.subject(request.match_info["subject"])


def _version(request: web.Request) -> int:
    return requests.version(request.match_info["version"])


def _id(request: web.Request) -> int:
    try:
        return int(request.match_info["id"])
    except ValueError:
        raise errors.schema_not_found() from None


def _flag(request: web.Request, name: str) -> bool:
    return requests.flag(request.query.get(name))


routes = web.RouteTableDef()


@routes.get("/")
async def root(request):
    return reply({})


@routes.get("/schemas")
async def all_schemas(request):
    query = request.query
    offset = requests.whole_number("offset", query.get("offset"), 0)
    limit = requests.whole_number("limit", query.get("limit"), -1)
    return reply(queries.all_schemas(request.app[STORE], prefix=query.get("subjectPrefix", ""),
                                     deleted=_flag(request, "deleted"), latest_only=_flag(request, "latestOnly"),
                                     offset=max(offset, 0), limit=limit))


@routes.get("/schemas/types")
async def schema_types(request):
    return reply(queries.SCHEMA_TYPES)


@routes.get("/schemas/ids/{id}")
async def schema_by_id(request):
    return reply(queries.schema_by_id(request.app[STORE], _id(request), request.query.get("format", "")))


@routes.get("/schemas/ids/{id}/schema")
async def schema_text(request):
    return web.Response(text=queries.schema_text(request.app[STORE], _id(request)), content_type=CONTENT_TYPE)


@routes.get("/schemas/ids/{id}/versions")
async def schema_versions(request):
    return reply(queries.id_versions(request.app[STORE], _id(request), deleted=_flag(request, "deleted")))


@routes.get("/schemas/ids/{id}/subjects")
async def schema_subjects(request):
    return reply(queries.id_subjects(request.app[STORE], _id(request), deleted=_flag(request, "deleted")))


@routes.get("/subjects")
async def subjects(request):
    return reply(queries.subjects(request.app[STORE], deleted=_flag(request, "deleted"),
                                  prefix=request.query.get("subjectPrefix", "")))


@routes.post("/subjects/{subject}")
async def lookup(request):
    body = requests.schema_request(await body_of(request))
    return reply(queries.lookup(request.app[STORE], _subject(request), body, normalize=_flag(request, "normalize"),
                                deleted=_flag(request, "deleted")))


@routes.delete("/subjects/{subject}")
async def delete_subject(request):
    subject = _subject(request)
    return await forward_or(request, lambda: request.app[REGISTRY].delete_subject(
        subject, permanent=_flag(request, "permanent")))


@routes.get("/subjects/{subject}/versions")
async def versions(request):
    return reply(queries.versions(request.app[STORE], _subject(request), deleted=_flag(request, "deleted")))


@routes.post("/subjects/{subject}/versions")
async def register(request):
    subject = _subject(request)
    body = requests.schema_request(await body_of(request))
    return await forward_or(request, lambda: request.app[REGISTRY].register(
        subject, body, normalize=_flag(request, "normalize")))


@routes.get("/subjects/{subject}/versions/{version}")
async def version(request):
    return reply(queries.get_version(request.app[STORE], _subject(request), _version(request),
                                     deleted=_flag(request, "deleted"), fmt=request.query.get("format", "")))


@routes.get("/subjects/{subject}/versions/{version}/schema")
async def version_schema(request):
    found = queries.get_version(request.app[STORE], _subject(request), _version(request),
                                deleted=_flag(request, "deleted"))
    return web.Response(text=found["schema"], content_type=CONTENT_TYPE)


@routes.get("/subjects/{subject}/versions/{version}/referencedby")
async def referenced_by(request):
    return reply(queries.referenced_by(request.app[STORE], _subject(request), _version(request)))


@routes.delete("/subjects/{subject}/versions/{version}")
async def delete_version(request):
    subject, number = _subject(request), _version(request)
    return await forward_or(request, lambda: request.app[REGISTRY].delete_version(
        subject, number, permanent=_flag(request, "permanent")))


@routes.post("/compatibility/subjects/{subject}/versions/{version}")
async def compatibility_one(request):
    body = requests.schema_request(await body_of(request))
    return reply(queries.test_compatibility(request.app[STORE], _subject(request), _version(request), body,
                                            normalize=_flag(request, "normalize"), verbose=_flag(request, "verbose")))


@routes.post("/compatibility/subjects/{subject}/versions")
async def compatibility_all(request):
    body = requests.schema_request(await body_of(request))
    return reply(queries.test_compatibility(request.app[STORE], _subject(request), None, body,
                                            normalize=_flag(request, "normalize"), verbose=_flag(request, "verbose")))


@routes.get("/config")
async def get_global_config(request):
    return reply(queries.get_config(request.app[STORE], None, default_to_global=True))


@routes.put("/config")
async def put_global_config(request):
    level = requests.level(await body_of(request))
    return await forward_or(request, lambda: request.app[REGISTRY].set_config(None, level))


@routes.delete("/config")
async def delete_global_config(request):
    return await forward_or(request, lambda: request.app[REGISTRY].delete_config(None))


@routes.get("/config/{subject}")
async def get_config(request):
    return reply(queries.get_config(request.app[STORE], _subject(request),
                                    default_to_global=_flag(request, "defaultToGlobal")))


@routes.put("/config/{subject}")
async def put_config(request):
    subject, level = _subject(request), requests.level(await body_of(request))
    return await forward_or(request, lambda: request.app[REGISTRY].set_config(subject, level))


@routes.delete("/config/{subject}")
async def delete_config(request):
    subject = _subject(request)
    return await forward_or(request, lambda: request.app[REGISTRY].delete_config(subject))


@routes.get("/mode")
async def get_global_mode(request):
    return reply(queries.get_mode(request.app[STORE], None, default_to_global=True))


@routes.put("/mode")
async def put_global_mode(request):
    mode = requests.mode(await body_of(request))
    return await forward_or(request, lambda: request.app[REGISTRY].set_mode(None, mode, force=_flag(request, "force")))


@routes.get("/mode/{subject}")
async def get_mode(request):
    return reply(queries.get_mode(request.app[STORE], _subject(request),
                                  default_to_global=_flag(request, "defaultToGlobal")))


@routes.put("/mode/{subject}")
async def put_mode(request):
    subject, mode = _subject(request), requests.mode(await body_of(request))
    return await forward_or(request, lambda: request.app[REGISTRY].set_mode(subject, mode,
                                                                            force=_flag(request, "force")))


@routes.delete("/mode/{subject}")
async def delete_mode(request):
    subject = _subject(request)
    return await forward_or(request, lambda: request.app[REGISTRY].delete_mode(subject))


def build_app(*, registry: Registry, kafka: KafkaStore, election: Election, authenticator: auth.Authenticator,
              client_ssl: ssl.SSLContext | bool, primary_wait: float = 20.0) -> web.Application:
    app = web.Application(middlewares=[error_middleware, auth_middleware], client_max_size=MAX_BODY)
    app[STORE], app[REGISTRY], app[KAFKA] = registry.store, registry, kafka
    app[ELECTION], app[AUTH], app[CLIENT_SSL], app[PRIMARY_WAIT] = election, authenticator, client_ssl, primary_wait
    app.add_routes(routes)
    return app
