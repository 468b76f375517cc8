"""Turn one request frame into one response: parse the header, decode, call the handler, encode.

Requests whose API key is unknown, or whose version we do not support, cannot be answered
in a format the client would parse, so the connection is closed, as Kafka's SocketServer
does. ApiVersions is the exception (KIP-511): an unsupported version gets a v0 response with
UNSUPPORTED_VERSION and our ranges, so the client can retry with a version we speak.
"""
from __future__ import annotations

import io
import logging
import struct
from dataclasses import dataclass, field
from typing import Any

import kafka.errors as Errors
from kafka.protocol.api_header import RequestHeader, ResponseHeader
from kafka.protocol.metadata import ApiVersionsResponse

from engine.protocol import registry

log = logging.getLogger(__name__)
_KEY_VERSION_CORRELATION = struct.Struct(">hhi")


class CloseConnection(Exception):
    """The request cannot be answered; the broker closes only this connection."""


@dataclass
class RequestContext:
    broker: Any                     # engine.broker.broker.Broker
    header: RequestHeader
    api_version: int
    client_host: str = ""
    extras: dict = field(default_factory=dict)

    @property
    def client_id(self) -> str | None:
        return self.header.client_id


@dataclass
class ZeroCopyResponse:
    """An encoded response whose record sections are sent from files (see network.py).

    `frame` is the framed, encoded response in which each slice's records field holds
    `markers[i]`; the writer swaps each marker for a length prefix and the file bytes.
    """
    frame: bytes
    markers: list[bytes]
    slices: list[Any]               # engine.storage FileSlice, one per marker
    compact: bool


@dataclass(frozen=True)
class EncodedBody:
    """A response body encoded once and answered to many requests (see response_cache.py);
    dispatch puts the request's correlation id in front of it."""
    body: bytes
    flexible: bool                  # the response header is v1 (tagged fields) for flexible versions


async def dispatch(broker: Any, frame: bytes | memoryview, client_host: str):
    """Return bytes, a ZeroCopyResponse, or None (no response, e.g. acks=0)."""
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
    try:
        stream = io.BytesIO(frame)
        header = RequestHeader.decode(stream, flexible=spec.request_class.flexible_version_q(api_version))
        request = spec.request_class.decode(memoryview(frame)[stream.tell():], version=api_version)
    except Exception as exc:  # noqa: BLE001 - any decode failure means a malformed request
        raise CloseConnection(f"malformed {spec.name} v{api_version} request: {exc!r}") from None
    ctx = RequestContext(broker=broker, header=header, api_version=api_version, client_host=client_host)
    response = await spec.handler(ctx, request)
    if response is None:
        return None
    if isinstance(response, ZeroCopyResponse):
        return response
    if isinstance(response, EncodedBody):
        return frame_encoded_body(response, correlation_id)
    return encode_response(response, api_version, correlation_id)


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
