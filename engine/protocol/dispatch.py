"""Turn one request frame into one response: parse the header, decode, call the handler, encode.

Requests whose API key is unknown, or whose version we do not support, cannot be answered
in a format the client would parse, so the connection is closed, as Kafka's SocketServer
does. ApiVersions is the exception (KIP-511): an unsupported version gets a v0 response with
UNSUPPORTED_VERSION and our ranges, so the client can retry with a version we speak.

A request that decodes but breaks the rules (a null where the schema allows none, a value
a handler refuses with `validation.InvalidRequest`, or one that trips a handler over a type
it did not expect) is answered INVALID_REQUEST and the connection is closed, as Kafka does.
It is logged as one line and counted (stats.py); no traceback, because nothing broke.

Frames over big_requests.OFF_LOOP_BYTES are decoded, and their answers encoded, on a worker
thread, so that one client's huge request never holds the event loop that every broker of
the process shares (big_requests.py).
"""
from __future__ import annotations

import io
import logging
import struct
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any

import kafka.errors as Errors
from kafka.protocol.api_header import RequestHeader, ResponseHeader
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata import ApiVersionsResponse

from engine.heap import FullCollectionsPaused
from engine.metrics.error_counts import error_codes
from engine.protocol import registry
from engine.protocol.big_requests import is_big, off_loop, release_in_slices
from engine.protocol.broker_view import BrokerView
from engine.protocol.request_quota import Charged, Timed, quota_of, record_after_answer
from engine.protocol.request_quota import record as record_request_time
from engine.protocol.response_frames import body_offset
from engine.protocol.stats import refused
from engine.protocol.validation import InvalidRequest, null_violation
from engine.security.settings import INTER_BROKER_USER
from engine.worker_time import WorkerTime, counting

log = logging.getLogger(__name__)
_THROTTLE = struct.Struct(">i")
_KEY_VERSION_CORRELATION = struct.Struct(">hhi")


class CloseConnection(Exception):
    """The request cannot be answered; the broker closes only this connection."""


@dataclass
class RequestContext:
    broker: BrokerView
    header: RequestHeader
    api_version: int
    client_host: str = ""
    session: Any = None             # the connection's SaslSession on a SASL listener (engine/security)
    identity: Any = None            # the connection's ConnectionIdentity (engine/security/principal.py)
    # The broker at the other end of an inter-broker connection (engine/protocol/inter_broker.py);
    # None for every client connection.
    inter_broker_peer: int | None = None
    # Callables (by a key of the handler's choice) the listener runs when this connection
    # closes: a share session ends with the connection it was opened on. None where there is
    # no connection (tests calling dispatch directly).
    on_close: dict | None = None
    api_name: str = ""              # the request's API, as Kafka names it (Produce, Fetch, ...): for the audit log

    @property
    def client_id(self) -> str | None:
        return self.header.client_id

    @property
    def principal(self) -> str:
        """The principal's name (the client-quota user): the SASL user or the certificate's
        mapped subject; the brokers' own principal on their inter-broker connections; Kafka's
        ANONYMOUS otherwise."""
        if self.identity is not None:
            return self.identity.user
        if self.inter_broker_peer is not None:
            return INTER_BROKER_USER
        return self.session.principal if self.session is not None and self.session.principal else "ANONYMOUS"

    @property
    def kafka_principal(self) -> str:
        """The principal as ACLs name it: `User:alice`, `User:ANONYMOUS`."""
        return self.identity.principal if self.identity is not None else f"User:{self.principal}"

    @property
    def listener_name(self) -> str | None:
        """The listener the request arrived on (Metadata advertises the brokers' endpoints of it)."""
        return self.identity.listener if self.identity is not None else None

    @property
    def controller(self):
        """The cluster's controller: metadata changes (topics, configs, elections)."""
        return self.broker.controller

    @property
    def coordinator(self):
        """This broker's group coordinator."""
        return self.broker.group_coordinator


@dataclass
class ZeroCopyResponse:
    """An encoded response whose record sections are sent from files (see listener.py).

    `frame` is the framed, encoded response in which each slice's records field holds
    `markers[i]`; the writer swaps each marker for a length prefix and the file bytes.
    """
    frame: bytes
    markers: list[bytes]
    slices: list[Any]               # engine.storage FileSlice, one per marker
    compact: bool
    # The codes ErrorsPerSec counts for it (engine/metrics/error_counts.py), when the handler
    # knows them; else they are read back from the frame.
    error_codes: list[int] | None = None


@dataclass(frozen=True)
class SilentClose:
    """No answer, and the connection closed: a Produce with acks=0 that failed, which Kafka
    closes so that the client refreshes its metadata; `error_codes` are counted."""
    error_codes: list[int]


@dataclass(frozen=True)
class FinalResponse:
    """The last response on a connection: the listener writes it, then closes."""
    frame: bytes


@dataclass(frozen=True)
class EncodeOffLoop:
    """A handler's answer that it knows to be big (thousands of entries for a small request):
    dispatch encodes it on the big-request worker (big_requests.py)."""
    response: Any


@dataclass(frozen=True)
class EncodedBody:
    """A response body encoded once and answered to many requests (see response_cache.py);
    dispatch puts the request's correlation id in front of it."""
    body: bytes
    flexible: bool                  # the response header is v1 (tagged fields) for flexible versions


async def dispatch(broker: Any, frame: bytes | memoryview, client_host: str, session: Any = None,
                   identity: Any = None, *, inter_broker_peer: int | None = None, on_close: dict | None = None):
    """Return bytes, a ZeroCopyResponse, or None (no response, e.g. acks=0)."""
    read_at = time.perf_counter()
    if len(frame) < _KEY_VERSION_CORRELATION.size:
        raise CloseConnection(f"request of {len(frame)} bytes is too short for a header")
    api_key, api_version, correlation_id = _KEY_VERSION_CORRELATION.unpack_from(frame)
    spec = registry.lookup(api_key)
    if spec is None:
        raise CloseConnection(f"unknown API key {api_key}")
    if not spec.supports(api_version):
        if api_key == 18:
            return _unsupported_api_versions(correlation_id)
        raise CloseConnection(f"unsupported version {api_version} of {spec.name} "
                              f"(supported {spec.min_version}-{spec.max_version})")
    if is_big(frame):
        with FullCollectionsPaused():
            return await _dispatch(broker, spec, frame, api_version, correlation_id, client_host, session,
                                   inter_broker_peer, read_at, big=True, identity=identity, on_close=on_close)
    return await _dispatch(broker, spec, frame, api_version, correlation_id, client_host, session, inter_broker_peer,
                           read_at, big=False, identity=identity, on_close=on_close)


async def _dispatch(broker, spec, frame, api_version: int, correlation_id: int, client_host: str, session,
                    inter_broker_peer: int | None, read_at: float, *, big: bool, identity=None,
                    on_close: dict | None = None):
    header, body_at = _decode_header(spec, frame, api_version)
    ctx = RequestContext(broker=broker, header=header, api_version=api_version, client_host=client_host,
                         session=session, identity=identity, inter_broker_peer=inter_broker_peer,
                         on_close=on_close, api_name=spec.name)
    request_quota = quota_of(ctx, spec.key)
    if request_quota is None:
        return await _handle(ctx, spec, frame, body_at, correlation_id, read_at, big=big)
    # request_percentage: the loop's and the worker threads' time on the whole request; the
    # handler's part decides the throttle, the rest (decoding, encoding) counts for the next
    # requests (request_quota.py)
    charged = Charged()
    with counting(WorkerTime()) as threads:
        whole = Timed(_handle(ctx, spec, frame, body_at, correlation_id, read_at, big=big,
                              request_quota=request_quota, threads=threads, charged=charged))
        answer = await whole
    record_after_answer(ctx, request_quota, threads.take() + max(0.0, whole.spent - charged.loop_s))
    return answer


async def _handle(ctx, spec, frame, body_at: int, correlation_id: int, read_at: float, *, big: bool,
                  request_quota=None, threads: WorkerTime | None = None, charged: Charged | None = None):
    """Decode the body, run the handler, encode its answer."""
    broker, api_key, api_version, client_host = ctx.broker, spec.key, ctx.api_version, ctx.client_host
    request, problem = await off_loop(_decode_body, spec, frame, body_at, api_version) if big else \
        _decode_body(spec, frame, body_at, api_version)
    if problem:
        _count(broker, api_key, api_version, read_at, _INVALID_REQUEST)
        return _invalid_request(spec, api_version, correlation_id, client_host, problem, request)
    handler_started = time.perf_counter()
    try:
        if request_quota is None:
            response = await registry.handler_for(spec)(ctx, request)
        else:
            handler = Timed(registry.handler_for(spec)(ctx, request))
            response = await handler
            charged.loop_s = handler.spent
            throttle_ms = record_request_time(ctx, request_quota, handler.spent + threads.take())
            response = _with_throttle(response, throttle_ms, spec.response_class, api_version)
    except InvalidRequest as exc:
        _count(broker, api_key, api_version, read_at, _INVALID_REQUEST, handler_started)
        return _invalid_request(spec, api_version, correlation_id, client_host, str(exc), request)
    except _RULE_BREAKS as exc:
        # A value the handler did not expect (a count too large for a range, a string where
        # bytes belong): the request's fault, so it is refused like any other bad request;
        # where it tripped is logged in place of a traceback.
        _count(broker, api_key, api_version, read_at, _INVALID_REQUEST, handler_started)
        return _invalid_request(spec, api_version, correlation_id, client_host,
                                f"{type(exc).__name__}: {exc} (at {_where(exc)})", request)
    if isinstance(response, SilentClose):
        _count(broker, api_key, api_version, read_at, response.error_codes, handler_started)
        return FinalResponse(b"")
    _count(broker, api_key, api_version, read_at, error_codes(api_key, spec.response_class, api_version, response),
           handler_started)
    if response is None:
        return None
    if isinstance(response, ZeroCopyResponse):
        if big:
            await release_in_slices(request)
        return response
    if isinstance(response, EncodedBody):
        return frame_encoded_body(response, correlation_id)
    if isinstance(response, EncodeOffLoop):
        encoded = await off_loop(encode_response, response.response, api_version, correlation_id)
        await release_in_slices(request, response.response)
        return encoded
    if big:           # a big request's answer is big too, as a rule: encoded off the loop as well
        encoded = await off_loop(encode_response, response, api_version, correlation_id)
        await release_in_slices(request, response)
        return encoded
    return encode_response(response, api_version, correlation_id)


def _decode_header(spec, frame, api_version: int):
    """(the request header, where the body starts): on the loop, a header is small."""
    try:
        stream = io.BytesIO(frame)
        header = RequestHeader.decode(stream, flexible=spec.request_class.flexible_version_q(api_version))
    except Exception as exc:  # noqa: BLE001 - any decode failure means a malformed request
        raise CloseConnection(f"malformed {spec.name} v{api_version} request: {exc!r}") from None
    return header, stream.tell()


def _decode_body(spec, frame, body_at: int, api_version: int):
    """(request, the first null where the schema allows none); on a worker thread for big
    frames (big_requests.py)."""
    try:
        request = spec.request_class.decode(memoryview(frame)[body_at:], version=api_version)
    except Exception as exc:  # noqa: BLE001 - any decode failure means a malformed request
        raise CloseConnection(f"malformed {spec.name} v{api_version} request: {exc!r}") from None
    return request, null_violation(request, spec.request_class.fields, api_version)


_INVALID_REQUEST = Errors.InvalidRequestError.errno


def _with_throttle(response, throttle_ms: int, response_class, api_version: int):
    """The answer telling a throttled client its throttle_time_ms (at least `throttle_ms`).
    An answer already encoded - a body cached per metadata image, a zero-copy Fetch - gets a
    copy with the field rewritten in place: it is the first field of the body in every version
    that has it. Without the field, the mute alone throttles."""
    if not throttle_ms or response is None:
        return response
    if isinstance(response, ApiMessage):
        if hasattr(response, "throttle_time_ms"):
            response.throttle_time_ms = max(response.throttle_time_ms or 0, throttle_ms)
        return response
    first, field = next(iter(response_class.fields.items()))
    if first != "throttle_time_ms" or not field.for_version_q(api_version):
        return response
    if isinstance(response, EncodedBody):
        return EncodedBody(_throttled(response.body, 0, throttle_ms), response.flexible)
    if isinstance(response, ZeroCopyResponse):
        start = body_offset(response.frame, flexible=response_class.flexible_version_q(api_version))
        return replace(response, frame=_throttled(response.frame, start, throttle_ms))
    return response


def _throttled(encoded: bytes, position: int, throttle_ms: int) -> bytes:
    current = _THROTTLE.unpack_from(encoded, position)[0]
    patched = bytearray(encoded)
    _THROTTLE.pack_into(patched, position, max(current, throttle_ms))
    return bytes(patched)


def _count(broker, api_key: int, api_version: int, read_at: float, errors: int | list[int],
           handler_started: float | None = None) -> None:
    """The request's metrics (engine/metrics/stats.py); broker None: a test dispatching alone."""
    if broker is not None:
        queue_ms = ((handler_started or time.perf_counter()) - read_at) * 1000
        broker.metrics.handled(api_key, api_version, queue_ms, errors)


_RULE_BREAKS = (TypeError, ValueError, OverflowError, struct.error, UnicodeError, KeyError, IndexError, AttributeError)


def _where(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"


def _invalid_request(spec, api_version: int, correlation_id: int, client_host: str, problem: str,
                     request) -> FinalResponse:
    refused(log, "invalid_requests", "INVALID_REQUEST from %s: %s v%d: %s; closing the connection",
            client_host, spec.name, api_version, problem)
    if spec.key == 0 and getattr(request, "acks", None) == 0:
        return FinalResponse(b"")     # acks=0 is never answered, not even an error: only closed (as Kafka)
    if spec.key == 18:    # clients parse an ApiVersions error as v0 (KIP-511), whatever they asked
        return FinalResponse(encode_response(ApiVersionsResponse(version=0, error_code=Errors.InvalidRequestError.errno,
                                                                 api_keys=[]), 0, correlation_id))
    response = spec.response_class()
    if "error_code" in spec.response_class.fields and spec.response_class.fields["error_code"].for_version_q(
            api_version):
        response.error_code = Errors.InvalidRequestError.errno
    return FinalResponse(encode_response(response, api_version, correlation_id))


def encode_response(response, api_version: int, correlation_id: int) -> bytes:
    response.API_VERSION = api_version  # before the header: the setter would touch a request header field
    response.with_header(correlation_id=correlation_id)
    return response.encode(header=True, framed=True)


def frame_encoded_body(encoded: EncodedBody, correlation_id: int) -> bytes:
    header = ResponseHeader(correlation_id=correlation_id).encode(flexible=encoded.flexible)
    return struct.pack(">i", len(header) + len(encoded.body)) + header + encoded.body


def _unsupported_api_versions(correlation_id: int) -> bytes:
    response = ApiVersionsResponse(
        version=0, error_code=Errors.UnsupportedVersionError.errno,
        api_keys=[ApiVersionsResponse.ApiVersion(api_key=s.key, min_version=s.min_version, max_version=s.max_version)
                  for s in registry.all_apis()])
    return encode_response(response, 0, correlation_id)
