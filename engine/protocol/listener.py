"""A broker's listener: its own acceptor, connection limits, request framing, response writing.

The listener accepts connections itself (`loop.sock_accept`), as Kafka's Acceptor does, so
that it can stop accepting while its own or the broker's `max.connections` are open and count a
connection from the moment it is admitted - through its TLS handshake (done on the accepted
socket) and its SASL login - until it closes (engine/protocol/connection_quotas.py, one per
broker: the limits count across its listeners).

One request per connection at a time, as Kafka's SocketServer does by muting a channel while
its request is in flight: a connection's task reads a frame, answers it, drains the reply, and
only then reads the next. Meanwhile at most 2 * _READ_LIMIT unread bytes are buffered (the
StreamReader pauses the transport there), so a client that pipelines, or that sends requests
and never reads the replies, fills its own socket buffers, not our memory or descriptors.
(Pausing the transport explicitly around every request cost produce throughput for nothing.)

Framing checks the 4-byte size prefix before reading the body, so a huge or negative prefix
costs nothing and closes only that connection: `socket.request.max.bytes` (100 MiB) once a
connection may send requests, and, on a SASL listener, `sasl.server.max.receive.size`
(512 KiB) until it has logged in, as Kafka's SaslServerAuthenticator reads its frames - so a
client that has not proved who it is cannot make the broker hold more than that.

Memory (`queued.max.request.bytes`, unbounded by default as in Kafka): a connection takes its
request's size from the broker's pool before reading the body and gives it back once the
request is answered; while nothing is left it waits (engine/protocol/request_memory.py).

Client quotas (KIP-219): after an answer whose handler muted the channel, the next request
is read only once the throttle time has passed (engine/protocol/channel_mute.py).

Limits, with Kafka's names and meanings (read from the broker config on each use, so dynamic
changes apply at once):
- `max.connections` (broker-wide and per listener), `max.connections.per.ip`,
  `max.connections.per.ip.overrides`: see connection_quotas.py. At its listener's or the
  broker's limit, the acceptor holds the connection it accepted and accepts nothing more; the
  inter-broker listener (of a broker with several) is held by its own limit only, and a
  connection it admits past the broker's closes the least recently used one of another listener;
- `max.connection.creation.rate` (broker-wide and per listener) and the addresses'
  `connection_creation_rate` (KIP-612): see connection_rates.py. Over the first, the acceptor
  waits before serving the connection it accepted, and accepts nothing meanwhile;
- `connections.max.idle.ms` (10 min): a connection that neither sent a request nor drained a
  reply for that long is closed (one still in its TLS handshake too); one whose request is
  being handled (a long poll) is not idle;
- and, process-wide, the socket share of the descriptors (engine/resources.py), so that
  accepting clients can never exhaust the descriptors that logs and listeners need.

Fetch responses are written zero-copy (engine/protocol/zero_copy.py).

Security (engine/security/settings.py): on SSL / SASL_SSL listeners the server speaks TLS;
on SASL ones each connection has a SaslSession, and until it is authenticated only
ApiVersions, SaslHandshake and SaslAuthenticate pass - anything else closes the connection
unanswered, and a failed login is answered, then closed (engine/security/session.py).
Once its session has ended (KIP-368: connections.max.reauth.ms, an OAUTHBEARER token's
expiry), a connection's next request closes it unanswered unless it is a SaslHandshake that
begins a re-authentication.
A broker has one Listener per named listener (engine/security/listeners.py); each connection
gets a ConnectionIdentity (engine/security/principal.py) naming its listener and principal:
the SASL user, or on an SSL listener with ssl.client.auth the client certificate's subject
mapped by ssl.principal.mapping.rules (a certificate no rule maps is closed at once). The
brokers' own connections (engine/protocol/inter_broker.py) are served by the inter-broker
listener as the brokers' principal, User:__engine-inter-broker, a super user to the authorizer.
"""
from __future__ import annotations

import asyncio
import logging
import socket
import struct
import time

from engine.protocol.channel_mute import open_channel, unmuted
from engine.protocol.dispatch import CloseConnection, FinalResponse, ZeroCopyResponse, dispatch
from engine.protocol.stats import STATS, refused
from engine.protocol.zero_copy import write_zero_copy
from engine.resources import DESCRIPTORS
from engine.security.principal import ConnectionIdentity
from engine.security.tls_principal import NoMatchingRule, subject_of
from engine.security.session import FAILED, SaslSession
from engine.security.settings import INTER_BROKER_USER, SecuritySettings, reloaded_tls

log = logging.getLogger(__name__)
_SIZE = struct.Struct(">i")
# Unread bytes a connection may buffer before its transport pauses (asyncio's StreamReader
# pauses at twice this); a frame larger than this is still read whole, in steps.
_READ_LIMIT = 1 << 20
_BACKLOG = 50                 # Kafka's socket.listen.backlog.size
_INTER_BROKER = f"User:{INTER_BROKER_USER}"   # the principal of the brokers' own connections
_ACCEPT_RETRY_S = 1.0         # after EMFILE and the like, as asyncio's own accept loop waits


class _Connection:
    __slots__ = ("peer_host", "last_active", "handling", "writer", "session", "task", "inter_broker_peer", "identity",
                 "on_close", "counted", "closed_for_room")

    def __init__(self, peer_host: str, session: SaslSession | None, task: asyncio.Task,
                 inter_broker_peer: int | None = None, identity: ConnectionIdentity | None = None) -> None:
        self.peer_host = peer_host
        self.session = session          # None: no SASL on this listener (or a broker's own connection)
        self.task = task
        self.inter_broker_peer = inter_broker_peer   # the broker at the other end of an inter-broker connection
        # The principal, from the listener (engine/security/principal.py); a client's once connected.
        self.identity = identity
        self.writer: asyncio.StreamWriter | None = None   # once connected (TLS: after the handshake)
        self.last_active = time.monotonic()
        self.handling = False          # a handler is working on this connection's request
        self.on_close: dict = {}       # what handlers asked to run when the connection closes
        # Counted against the broker's connection limits: a client's, until it is closed to make room.
        self.counted = inter_broker_peer is None
        self.closed_for_room = False   # closed while its request was handled: that request ends unanswered

    def closed(self) -> None:
        for callback in self.on_close.values():
            try:
                callback()
            except Exception:  # noqa: BLE001 - one failing callback must not skip the others
                log.exception("A callback on the close of a connection from %s failed", self.peer_host)
        self.on_close.clear()


class Listener:
    def __init__(self, broker, host: str, port: int, security: SecuritySettings | None = None, *,
                 inter_broker: bool = False) -> None:
        self.broker = broker
        self.inter_broker = inter_broker     # inter.broker.listener.name names it (engine/runtime.py)
        self.security = security or SecuritySettings()
        self.name = self.security.listener or self.security.protocol    # the listener's name, e.g. EXTERNAL
        self.host = host
        self.port = port
        # Its TLS, which key store and trust store updates at run time replace (reload_tls).
        self.server_ssl = self.security.server_ssl
        self.server_certificate = self.security.server_certificate
        self.tls_dynamic: dict[str, str] = {}
        self._sockets: list[socket.socket] = []
        self._tasks: list[asyncio.Task] = []           # the acceptors and the idle sweeper
        self._connections: dict[asyncio.Task, _Connection] = {}
        self._throttled: dict[socket.socket, asyncio.TimerHandle] = {}   # held until their throttle ends
        self._closing = False

    def _config(self, name: str):
        return self.broker.config.get(name)

    # --- TLS updated at run time -------------------------------------------------------------
    def tls_update(self, broker_dynamic: dict) -> dict[str, str] | None:
        """This listener's `ssl.*` configs among a broker's dynamic configs, de-prefixed
        (`listener.name.<name>.ssl.keystore.location` -> `ssl.keystore.location`); None when it
        speaks no TLS or they are what it already runs with."""
        if self.server_ssl is None:
            return None
        prefix = f"listener.name.{self.name.lower()}."
        wanted = {name[len(prefix):]: str(value) for name, value in broker_dynamic.items()
                  if name.lower().startswith(prefix) and name[len(prefix):].startswith("ssl.")}
        return None if wanted == self.tls_dynamic else wanted

    def check_tls(self, dynamic: dict[str, str]):
        """The context and certificate those configs give; raises InvalidConfigError."""
        return reloaded_tls(self.security, dynamic, self.server_certificate)

    def reload_tls(self, dynamic: dict[str, str]) -> None:
        """New connections use the key store and trust store set at run time; open ones keep theirs."""
        self.server_ssl, self.server_certificate = self.check_tls(dynamic)
        self.tls_dynamic = dynamic
        log.info("Listener %s on port %d reloaded its TLS key store and trust store", self.name, self.port)

    @property
    def serving(self) -> bool:
        return bool(self._sockets) and not self._closing

    async def start(self) -> None:
        self._closing = False
        self._sockets = _bind(self.host, self.port)
        self._tasks = [asyncio.create_task(self._accept(s)) for s in self._sockets]
        self._tasks.append(asyncio.create_task(self._close_idle_connections()))

    async def stop(self) -> None:
        if not self._sockets:
            return
        self._closing = True   # a connection accepted from here on is closed at once
        for task in [*self._tasks, *self._connections]:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._connections, return_exceptions=True)
        for sock, handle in list(self._throttled.items()):
            handle.cancel()
            self._close_throttled(sock)
        for sock in self._sockets:
            sock.close()
        self._sockets, self._tasks = [], []

    # --- accepting --------------------------------------------------------------------------

    async def _accept(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, address = await loop.sock_accept(listening)
            except OSError as exc:     # EMFILE, ENOBUFS ...: the process is short of something; wait
                log.warning("Broker on port %d cannot accept a connection: %s", self.port, exc)
                await asyncio.sleep(_ACCEPT_RETRY_S)
                continue
            try:
                await self._wait_to_admit(address[0])
            except asyncio.CancelledError:     # the listener stops
                sock.close()
                raise
            self._admit(sock, address[0])      # at once: nothing else may take the place first

    @property
    def protected(self) -> bool:
        """Kafka's protected listener: the inter-broker one, when the broker has others."""
        return self.inter_broker and len(self.broker.listeners) > 1

    async def _wait_to_admit(self, peer_host: str) -> None:
        """Kafka's waitForConnectionSlot: the connection just accepted waits past the creation
        rates (KIP-612), then for a place under its listener's and the broker's max.connections
        (KIP-402); the acceptor accepts nothing meanwhile, and that time is its blocked time."""
        quotas = self.broker.connection_quotas
        started = time.perf_counter_ns()
        throttled = await self._throttle_accept(peer_host)
        full = not quotas.slot_available(self.name, protected=self.protected)
        if full:
            log.debug("Listener %s on port %d holds a connection from %s: max.connections reached",
                      self.name, self.port, peer_host)
            await quotas.wait_for_slot(self.name, protected=self.protected)
        if throttled or full:
            quotas.blocked(self.name, time.perf_counter_ns() - started)

    async def _throttle_accept(self, peer_host: str) -> bool:
        """KIP-612: over the listener's or the broker's max.connection.creation.rate, the
        connection just accepted waits, and so does the acceptor, as Kafka's blocks."""
        throttle_ms = self.broker.connection_rates.accept(self.name, protected=self.protected)
        if throttle_ms:
            log.debug("Listener %s on port %d delays a connection from %s by %d ms (max.connection.creation.rate)",
                      self.name, self.port, peer_host, throttle_ms)
            await asyncio.sleep(throttle_ms / 1000)
        return bool(throttle_ms)

    def _admit(self, sock: socket.socket, peer_host: str) -> None:
        reason = self._refusal(peer_host)
        if reason is not None:
            refused(log, "connections_refused", "Broker on port %d refused a connection from %s: %s",
                    self.port, peer_host, reason)
            sock.close()
            return
        throttle_ms = self.broker.connection_rates.ip_throttle_ms(self.name, peer_host, protected=self.protected)
        if throttle_ms:
            refused(log, "connections_refused", "Broker on port %d throttles a connection from %s for %d ms "
                    "(connection_creation_rate)", self.port, peer_host, throttle_ms)
            self.broker.connection_quotas.remove(self.name, peer_host)
            handle = asyncio.get_running_loop().call_later(throttle_ms / 1000, self._close_throttled, sock)
            self._throttled[sock] = handle
            return
        session = SaslSession(self.security) if self.security.sasl else None
        task = asyncio.create_task(self._serve_client(sock, peer_host))
        self._connections[task] = _Connection(peer_host, session, task)
        self.broker.connection_quotas.close_excess()   # the protected listener's, past the broker's limit

    # --- making room (engine/protocol/connection_quotas.py) ----------------------------------

    def least_recently_used(self) -> tuple[float, _Connection] | None:
        """Kafka's Selector.lowestPriorityChannel: the counted connection whose last request or
        reply is the oldest (one whose request is being handled is in use now), with that time."""
        now = time.monotonic()
        return min(((now if c.handling else c.last_active, c) for c in self._connections.values() if c.counted),
                   key=lambda found: found[0], default=None)

    def close_for_room(self, connection: _Connection) -> None:
        """Close a connection to bring the broker back within max.connections. It leaves the
        counts at once, as Kafka's close does; its task is cancelled on the loop's next turn,
        once it has begun (a task cancelled before its first step would never clean up).
        A connection whose request is being handled is closed to its client at once, but its
        handler runs to its end and the answer is dropped, as Kafka's KafkaApis finishes a
        request whose channel has gone: cancelled at an await, a handler would leave what it
        had written unapplied (an OffsetCommit's record in the log, not in the group)."""
        refused(log, "connections_closed_for_room", "Closing the least recently used connection, from %s on "
                "listener %s: the broker has more than max.connections (%d) open", connection.peer_host, self.name,
                self._config("max.connections"))
        connection.counted = False
        self.broker.connection_quotas.remove(self.name, connection.peer_host)
        if connection.handling:
            connection.closed_for_room = True
            if connection.writer is not None:
                connection.writer.transport.abort()
            return
        connection.task.get_loop().call_soon(connection.task.cancel)

    @property
    def connection_count(self) -> int:
        """Kafka's connection-count: the connections this listener serves (the brokers' own included)."""
        return len(self._connections)

    def _close_throttled(self, sock: socket.socket) -> None:
        """The end of a throttled connection's hold: closed unserved."""
        if self._throttled.pop(sock, None) is not None:
            sock.close()
            DESCRIPTORS.release_socket()

    def _refusal(self, peer_host: str) -> str | None:
        if self._closing:
            return "the broker is stopping"
        if not DESCRIPTORS.take_socket():
            return f"the process's socket share of descriptors ({DESCRIPTORS.sockets}) is in use"
        reason = self.broker.connection_quotas.add(self.name, peer_host)
        if reason is not None:
            DESCRIPTORS.release_socket()
        return reason

    async def _serve_client(self, sock: socket.socket, peer_host: str) -> None:
        connection = self._connections[asyncio.current_task()]
        try:
            reader, connection.writer = await _open_streams(sock, self.server_ssl)
            connection.identity = self._identity(connection.writer, connection.session)
            await self._serve_requests(reader, connection.writer, connection)
        except NoMatchingRule as exc:
            refused(log, "authentication_failures", "Closing a TLS connection from %s on listener %s: %s "
                    "(ssl.principal.mapping.rules)", peer_host, self.name, exc)
        except CloseConnection as exc:
            refused(log, "malformed_requests", "Closing connection from %s: %s", peer_host, exc)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):   # TLS handshake failures included
            pass
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 - one bad request must not take the listener down
            log.exception("Unexpected error serving %s; closing the connection", peer_host)
        finally:
            del self._connections[connection.task]
            connection.closed()
            if connection.counted:       # not when closed to make room: out of the counts already
                self.broker.connection_quotas.remove(self.name, peer_host)
            DESCRIPTORS.release_socket()
            if connection.writer is not None:
                connection.writer.transport.abort()
            else:                      # never connected (refused TLS handshake, cancelled): the socket is ours
                sock.close()

    # --- the brokers' own connections (engine/protocol/inter_broker.py) ----------------------

    async def accept_inter_broker(self, peer_node: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection from broker `peer_node` of this process: a socket pair, one end served
        here (no TLS, no login, not counted against the connection limits: see
        connection_quotas.py), the other returned."""
        ours, theirs = socket.socketpair()
        task = asyncio.create_task(self._serve_inter_broker(ours, peer_node))
        self._connections[task] = _Connection(f"broker {peer_node}", None, task, inter_broker_peer=peer_node,
                                              identity=ConnectionIdentity(self.name, established=_INTER_BROKER))
        try:
            return await asyncio.open_connection(sock=theirs, limit=_READ_LIMIT)
        except BaseException:
            theirs.close()
            task.cancel()
            raise

    async def _serve_inter_broker(self, sock: socket.socket, peer_node: int) -> None:
        connection = self._connections[asyncio.current_task()]
        try:
            reader, connection.writer = await _open_streams(sock, None)
            await self._serve_requests(reader, connection.writer, connection)
        except (asyncio.IncompleteReadError, ConnectionError, OSError, asyncio.CancelledError):
            pass
        except Exception:  # noqa: BLE001 - a broken request must not take the listener down
            log.exception("Unexpected error serving broker %d; closing its connection", peer_node)
        finally:
            del self._connections[connection.task]
            connection.closed()
            if connection.writer is not None:
                connection.writer.transport.abort()
            else:
                sock.close()

    # --- requests ---------------------------------------------------------------------------

    def _frame_limit(self, session: SaslSession | None) -> tuple[int, str]:
        if session is not None and not session.authenticated:
            return self._config("sasl.server.max.receive.size"), "sasl.server.max.receive.size, before authentication"
        return self._config("socket.request.max.bytes"), "socket.request.max.bytes"

    def _identity(self, writer: asyncio.StreamWriter, session: SaslSession | None) -> ConnectionIdentity:
        """Who a client's connection speaks for: the SASL user once logged in, a verified client
        certificate's mapped subject on an SSL listener, else User:ANONYMOUS."""
        tls_principal = None
        if self.security.ssl_client_auth != "none":
            ssl_object = writer.get_extra_info("ssl_object")
            certificate = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
            if certificate:
                tls_principal = "User:" + self.security.principal_mapper.name(subject_of(certificate))
        return ConnectionIdentity(listener=self.name, session=session, established=tls_principal)

    async def _serve_requests(self, reader, writer, connection: _Connection) -> None:
        channel = open_channel()     # quota handlers mute it (KIP-219): engine/protocol/channel_mute.py
        if connection.session is not None:      # its logins are counted with the listener's (KIP-368)
            connection.session.stats = self.broker.metrics.sasl_listener(self.name)
        # The brokers' own requests never wait for memory: replication must go on (request_memory.py).
        memory = self.broker.request_memory if connection.inter_broker_peer is None else None
        while not self._closing:
            await unmuted(channel)   # a throttled client's next request is read only after its throttle time
            (size,) = _SIZE.unpack(await reader.readexactly(4))
            limit, limit_name = self._frame_limit(connection.session)
            if size <= 0 or size > limit:
                raise CloseConnection(f"request size {size} outside 1..{limit} ({limit_name})")
            if memory is not None:
                await memory.acquire(size)   # queued.max.request.bytes: wait before reading the body
            try:
                if not await self._serve_one(reader, writer, connection, size):
                    return
            finally:
                if memory is not None:
                    memory.release(size)

    async def _serve_one(self, reader, writer, connection: _Connection, size: int) -> bool:
        """Read one request's body, answer it and drain the answer; False when the connection
        must close now."""
        session = connection.session
        frame = await reader.readexactly(size)
        if session is not None and session.raw_tokens:      # after SaslHandshake v0
            return await _answer_raw_token(session, frame, writer, connection.peer_host)
        if session is not None and session.expires_at is not None and session.expired(frame):
            log.info("Closing the connection from %s on listener %s: its SASL session (%s, %s) expired and it sent "
                     "API key %d, not a re-authentication (KIP-368)", connection.peer_host, self.name,
                     session.mechanism, session.principal, int.from_bytes(frame[:2], "big", signed=True))
            return False
        if session is not None and not session.authenticated:
            reason = session.refusal(frame)
            if reason is not None:
                refused(log, "authentication_failures", "Closing an unauthenticated connection from %s: %s",
                        connection.peer_host, reason)
                return False
        connection.handling = True
        read_at = time.perf_counter()
        try:
            response = await dispatch(self.broker, frame, connection.peer_host, session, connection.identity,
                                      inter_broker_peer=connection.inter_broker_peer,
                                      on_close=connection.on_close)
        finally:
            connection.handling = False
            connection.last_active = time.monotonic()
        if connection.closed_for_room:     # closed to make room meanwhile: the answer is dropped
            if isinstance(response, ZeroCopyResponse):
                for file_slice in response.slices:     # each holds a dup of a segment's descriptor
                    file_slice.close()
            return False
        if isinstance(response, FinalResponse):    # INVALID_REQUEST: answer (unless acks=0), then close
            if response.frame:
                writer.write(response.frame)
                await writer.drain()
            return False
        if response is not None:
            if isinstance(response, ZeroCopyResponse):
                await write_zero_copy(writer, response)
            else:
                writer.write(response)
                await writer.drain()
        # TotalTimeMs: read to written (the API key is the frame's first two bytes)
        self.broker.metrics.completed((frame[0] << 8) | frame[1], (time.perf_counter() - read_at) * 1000)
        connection.last_active = time.monotonic()
        if session is not None and session.state == FAILED:   # answered; now closed, as Kafka does
            refused(log, "authentication_failures", "SASL %s %s from %s failed; closing the connection",
                    session.mechanism, session.authentication_text, connection.peer_host)
            await _close_after_failure(reader, writer)
            return False
        return True

    async def _close_idle_connections(self) -> None:
        """Kafka's `connections.max.idle.ms`: close connections with no request and no
        written reply for that long (a stuck reader, or a TLS handshake never finished, included)."""
        while True:
            idle_s = self._config("connections.max.idle.ms") / 1000
            await asyncio.sleep(min(max(idle_s / 4, 0.05), 30))
            now = time.monotonic()
            for connection in list(self._connections.values()):
                if not connection.handling and now - connection.last_active > idle_s:
                    STATS["connections_idle_closed"] += 1
                    log.info("Closing connection from %s: idle for more than %d ms (connections.max.idle.ms)",
                             connection.peer_host, idle_s * 1000)
                    connection.task.cancel()


def _bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address `host` resolves to (as asyncio.start_server binds)."""
    sockets = []
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                                  flags=socket.AI_PASSIVE):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(_BACKLOG)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


async def _open_streams(sock: socket.socket, server_ssl) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over an accepted socket, after the TLS handshake if the listener speaks TLS."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_READ_LIMIT)
    writers: list[asyncio.StreamWriter] = []
    # A connected-callback makes the protocol server-side and builds the writer for us.
    protocol = asyncio.StreamReaderProtocol(reader, lambda _, writer: writers.append(writer))
    await loop.connect_accepted_socket(lambda: protocol, sock=sock, ssl=server_ssl)
    return reader, writers[0]


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


