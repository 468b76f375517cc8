"""A broker's listener: asyncio TCP server, connection limits, request framing, response writing.

One request per connection at a time, as Kafka's SocketServer does by muting a channel while
its request is in flight: a connection's task reads a frame, answers it, drains the reply, and
only then reads the next. Meanwhile at most 2 * _READ_LIMIT unread bytes are buffered (the
StreamReader pauses the transport there), so a client that pipelines, or that sends requests
and never reads the replies, fills its own socket buffers, not our memory or descriptors.
(Pausing the transport explicitly around every request cost produce throughput for nothing.)

Framing enforces `socket.request.max.bytes` on the 4-byte size prefix before reading the
body, so a huge or negative prefix costs nothing and closes only that connection.

Client quotas (KIP-219): after an answer whose handler muted the channel, the next request
is read only once the throttle time has passed (engine/protocol/channel_mute.py).

Limits, with Kafka's names and meanings (read from the broker config on each use, so dynamic
changes apply at once):
- `max.connections`: a broker with that many connections closes new ones at once;
- `max.connections.per.ip`: likewise per client address;
- `connections.max.idle.ms` (10 min): a connection that neither sent a request nor drained a
  reply for that long is closed; one whose request is being handled (a long poll) is not idle;
- and, process-wide, the socket share of the descriptors (engine/resources.py), so that
  accepting clients can never exhaust the descriptors that logs and listeners need.

Fetch responses are written zero-copy: the encoded headers go through the transport and the
record bytes go from the segment file to the socket with sendfile (`loop.sendfile`). Under
TLS the kernel cannot encrypt, so the bytes are read and written in chunks instead, as
Kafka does for SSL listeners (asyncio's own sendfile fallback stalled on TLS transports).

Security (engine/security/settings.py): on SSL / SASL_SSL listeners the server speaks TLS;
on SASL ones each connection has a SaslSession, and until it is authenticated only
ApiVersions, SaslHandshake and SaslAuthenticate pass - anything else closes the connection
unanswered, and a failed login is answered, then closed (engine/security/session.py).
A broker has one Listener per named listener (engine/security/listeners.py); each connection
gets a ConnectionIdentity (engine/security/principal.py) naming its listener and principal:
the SASL user, or on an SSL listener with ssl.client.auth the client certificate's subject
mapped by ssl.principal.mapping.rules (a certificate no rule maps is closed at once).
"""
from __future__ import annotations

import asyncio
import collections
import logging
import os
import struct
import time

from kafka.protocol.schemas.fields.codecs.types import Int32, UnsignedVarInt32

from engine.protocol.channel_mute import open_channel, unmuted
from engine.protocol.dispatch import CloseConnection, FinalResponse, ZeroCopyResponse, dispatch
from engine.protocol.stats import STATS, refused
from engine.resources import DESCRIPTORS
from engine.security.principal import ConnectionIdentity
from engine.security.tls_principal import NoMatchingRule, subject_of
from engine.security.session import FAILED, SaslSession
from engine.security.settings import SecuritySettings

log = logging.getLogger(__name__)
_SIZE = struct.Struct(">i")
# Unread bytes a connection may buffer before its transport pauses (asyncio's StreamReader
# pauses at twice this); a frame larger than this is still read whole, in steps.
_READ_LIMIT = 1 << 20


class _Connection:
    __slots__ = ("peer_host", "last_active", "handling", "writer", "session", "identity")

    def __init__(self, peer_host: str, writer: asyncio.StreamWriter, identity: ConnectionIdentity) -> None:
        self.peer_host = peer_host
        self.identity = identity        # the principal, from the listener (engine/security/principal.py)
        self.session = identity.session  # None: no SASL on this listener
        self.writer = writer
        self.last_active = time.monotonic()
        self.handling = False          # a handler is working on this connection's request


class Listener:
    def __init__(self, broker, host: str, port: int, security: SecuritySettings | None = None) -> None:
        self.broker = broker
        self.security = security or SecuritySettings()
        self.name = self.security.listener or self.security.protocol    # the listener's name, e.g. EXTERNAL
        self.host = host
        self.port = port
        self._server: asyncio.base_events.Server | None = None
        self._connections: dict[asyncio.Task, _Connection] = {}
        self._per_ip: collections.Counter = collections.Counter()
        self._sweeper: asyncio.Task | None = None
        self._closing = False

    def _config(self, name: str):
        return self.broker.config.get(name)

    async def start(self) -> None:
        self._closing = False
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True,
                                                  limit=_READ_LIMIT, ssl=self.security.server_ssl)
        self._sweeper = asyncio.create_task(self._close_idle_connections())

    async def stop(self) -> None:
        if self._server is None:
            return
        self._closing = True   # a connection accepted from here on is closed at once
        self._server.close()
        self._sweeper.cancel()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(self._sweeper, *self._connections, return_exceptions=True)
        try:
            await asyncio.wait_for(self._server.wait_closed(), 5)
        except asyncio.TimeoutError:
            log.warning("Listener on port %d: connections still open after close", self.port)
        self._server = None

    # --- connections ----------------------------------------------------------------------

    def _refusal(self, peer_host: str) -> str | None:
        if self._closing:
            return "the broker is stopping"
        if len(self._connections) >= self._config("max.connections"):
            return f"max.connections ({self._config('max.connections')}) reached"
        if self._per_ip[peer_host] >= self._config("max.connections.per.ip"):
            return f"max.connections.per.ip ({self._config('max.connections.per.ip')}) reached for {peer_host}"
        if not DESCRIPTORS.take_socket():
            return f"the process's socket share of descriptors ({DESCRIPTORS.sockets}) is in use"
        return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        reason = self._refusal(peer[0])
        if reason is not None:
            refused(log, "connections_refused", "Broker on port %d refused a connection from %s: %s",
                    self.port, peer[0], reason)
            writer.transport.abort()
            return
        task = asyncio.current_task()
        try:
            identity = self._identity(writer)
        except NoMatchingRule as exc:
            refused(log, "authentication_failures", "Closing a TLS connection from %s on listener %s: %s "
                    "(ssl.principal.mapping.rules)", peer[0], self.name, exc)
            DESCRIPTORS.release_socket()
            writer.transport.abort()
            return
        connection = self._connections[task] = _Connection(peer[0], writer, identity)
        self._per_ip[peer[0]] += 1
        try:
            await self._serve_requests(reader, writer, connection)
        except CloseConnection as exc:
            refused(log, "malformed_requests", "Closing connection from %s: %s", peer, exc)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 - one bad request must not take the listener down
            log.exception("Unexpected error serving %s; closing the connection", peer)
        finally:
            del self._connections[task]
            self._per_ip[peer[0]] -= 1
            if not self._per_ip[peer[0]]:
                del self._per_ip[peer[0]]
            DESCRIPTORS.release_socket()
            writer.transport.abort()

    def _identity(self, writer: asyncio.StreamWriter) -> ConnectionIdentity:
        """Who the connection speaks for: the SASL user once logged in, a verified client
        certificate's mapped subject on an SSL listener, else User:ANONYMOUS."""
        session = SaslSession(self.security) if self.security.sasl else None
        tls_principal = None
        if self.security.ssl_client_auth != "none":
            ssl_object = writer.get_extra_info("ssl_object")
            certificate = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
            if certificate:
                tls_principal = "User:" + self.security.principal_mapper.name(subject_of(certificate))
        return ConnectionIdentity(listener=self.name, session=session, tls_principal=tls_principal)

    async def _serve_requests(self, reader, writer, connection: _Connection) -> None:
        channel = open_channel()     # quota handlers mute it (KIP-219): engine/protocol/channel_mute.py
        while not self._closing:
            await unmuted(channel)   # a throttled client's next request is read only after its throttle time
            (size,) = _SIZE.unpack(await reader.readexactly(4))
            limit = self._config("socket.request.max.bytes")
            if size <= 0 or size > limit:
                raise CloseConnection(f"request size {size} outside 1..{limit} (socket.request.max.bytes)")
            frame = await reader.readexactly(size)
            session = connection.session
            if session is not None and session.raw_tokens:      # after SaslHandshake v0
                if not await _answer_raw_token(session, frame, writer, connection.peer_host):
                    return
                continue
            if session is not None and not session.authenticated:
                reason = session.refusal(frame)
                if reason is not None:
                    refused(log, "authentication_failures", "Closing an unauthenticated connection from %s: %s",
                            connection.peer_host, reason)
                    return
            connection.handling = True
            try:
                response = await dispatch(self.broker, frame, connection.peer_host, session, connection.identity)
            finally:
                connection.handling = False
                connection.last_active = time.monotonic()
            if isinstance(response, FinalResponse):    # INVALID_REQUEST: answer (unless acks=0), then close
                if response.frame:
                    writer.write(response.frame)
                    await writer.drain()
                return
            if response is not None:
                if isinstance(response, ZeroCopyResponse):
                    await _write_zero_copy(writer, response)
                else:
                    writer.write(response)
                    await writer.drain()
            connection.last_active = time.monotonic()
            if session is not None and session.state == FAILED:   # answered; now closed, as Kafka does
                refused(log, "authentication_failures", "SASL %s authentication from %s failed; closing the "
                        "connection", session.mechanism, connection.peer_host)
                await _close_after_failure(reader, writer)
                return

    async def _close_idle_connections(self) -> None:
        """Kafka's `connections.max.idle.ms`: close connections with no request and no
        written reply for that long (a stuck reader included)."""
        while True:
            idle_s = self._config("connections.max.idle.ms") / 1000
            await asyncio.sleep(min(max(idle_s / 4, 0.05), 30))
            now = time.monotonic()
            for connection in list(self._connections.values()):
                if not connection.handling and now - connection.last_active > idle_s:
                    STATS["connections_idle_closed"] += 1
                    log.info("Closing connection from %s: idle for more than %d ms (connections.max.idle.ms)",
                             connection.peer_host, idle_s * 1000)
                    connection.writer.transport.abort()

    def connection_count(self) -> int:
        return len(self._connections)


_COPY_CHUNK = 1 << 20


async def _write_copied(writer: asyncio.StreamWriter, file_slice) -> None:
    """A slice's bytes through the transport (TLS), a chunk at a time so memory stays bounded."""
    done = 0
    while done < file_slice.size:
        chunk = os.pread(file_slice.fileno(), min(_COPY_CHUNK, file_slice.size - done), file_slice.position + done)
        if not chunk:
            raise ConnectionError("segment file ended before the slice did")   # truncated under us: drop the connection
        writer.write(chunk)
        done += len(chunk)
        await writer.drain()


# Kafka's connection.failed.authentication.delay.ms (KIP-306): a failed login is closed no
# sooner than this, which slows password guessing down.
_FAILED_AUTHENTICATION_DELAY_S = 0.1
_CLIENT_HANG_UP_WAIT_S = 5.0


async def _close_after_failure(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Close a connection whose login failed once the client has had its answer: after
    Kafka's delay, when the client hangs up or sends anything more (never served), or after
    a bounded wait. Closing at once lost the answer in kafka-python, which drops the bytes
    that arrive together with the close, and reported a bare disconnect instead of why."""
    await asyncio.sleep(_FAILED_AUTHENTICATION_DELAY_S)
    try:
        async with asyncio.timeout(_CLIENT_HANG_UP_WAIT_S):
            await reader.read(1)
    except (asyncio.TimeoutError, ConnectionError):
        pass


async def _answer_raw_token(session: SaslSession, frame: bytes, writer: asyncio.StreamWriter, peer_host: str) -> bool:
    """A bare SASL token (after SaslHandshake v0) gets a bare reply; False: failed, close."""
    reply = session.raw_token_reply(frame)
    if reply is None:
        refused(log, "authentication_failures", "SASL %s authentication from %s failed; closing the connection",
                session.mechanism, peer_host)
        return False
    writer.write(reply)
    await writer.drain()
    return True


async def _write_zero_copy(writer: asyncio.StreamWriter, response: ZeroCopyResponse) -> None:
    """Write the encoded parts, and sendfile each slice's bytes in place of its marker.
    The markers appear in the frame in the order of `response.markers` (k01_fetch)."""
    try:
        frame = response.frame
        prefix_of = (lambda n: UnsignedVarInt32.encode(n + 1)) if response.compact else Int32.encode
        placeholders = [prefix_of(len(m)) + m for m in response.markers]
        sizes = [s.size for s in response.slices]
        # The frame's size field counted the markers; recount with the real prefixes and bytes.
        total = len(frame) - 4 - sum(map(len, placeholders)) + sum(len(prefix_of(n)) + n for n in sizes)
        writer.write(_SIZE.pack(total))
        position = 4
        loop = asyncio.get_running_loop()
        tls = writer.get_extra_info("ssl_object") is not None
        for placeholder, file_slice in zip(placeholders, response.slices):
            at = frame.index(placeholder, position)
            writer.write(bytes(frame[position:at]) + prefix_of(file_slice.size))
            position = at + len(placeholder)
            await writer.drain()
            if tls:
                await _write_copied(writer, file_slice)
            else:
                with open(file_slice.fileno(), "rb", buffering=0, closefd=False) as handle:
                    await loop.sendfile(writer.transport, handle, file_slice.position, file_slice.size)
        writer.write(bytes(frame[position:]))
        await writer.drain()
    finally:
        for file_slice in response.slices:
            file_slice.close()
