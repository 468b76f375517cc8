"""The bootstrap list handed to kafka-python: only the servers that accept a TCP connection.

kafka-python picks a bootstrap server at random on every attempt, also one that just refused
and is in backoff; with one broker of three down, a 5 s bootstrap can spend all its attempts on
the dead one (1 in 3 per attempt) and report the whole cluster unreachable. The Java client
skips nodes in backoff. This module probes every listed server at once with a plain TCP
connect and keeps the ones that answered; when none answered, the whole list is kept, so that
the client reports the cluster's own error (refused, timed out, TLS, SASL).
"""
from __future__ import annotations

import selectors
import socket
import time


def server_list(bootstrap_servers: str) -> list[str]:
    """"host:port,host:port" as a list, blanks dropped."""
    return [s.strip() for s in bootstrap_servers.split(",") if s.strip()]


def answering_servers(servers: list[str], *, timeout_s: float = 1.0, grace_s: float = 0.05) -> list[str]:
    """The servers of `servers` that accept a TCP connection within `timeout_s`, in their
    order; all of `servers` when none does (or when there is only one to choose from).
    Once one has answered, the others get `grace_s` more: a host that drops packets (powered
    off, firewalled) costs a page that much, not the whole timeout."""
    if len(servers) < 2:
        return servers
    pending: dict[socket.socket, str] = {}
    answered: set[str] = set()
    with selectors.DefaultSelector() as selector:
        for server in servers:
            sock = _start_connect(server)
            if sock is not None:
                pending[sock] = server
                selector.register(sock, selectors.EVENT_WRITE)
        deadline = time.monotonic() + timeout_s
        try:
            while pending and (left := deadline - time.monotonic()) > 0:
                for key, _ in selector.select(left):
                    sock = key.fileobj
                    selector.unregister(sock)
                    server = pending.pop(sock)
                    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                        if not answered:
                            deadline = min(deadline, time.monotonic() + grace_s)
                        answered.add(server)
                    sock.close()
        finally:
            for sock in pending:
                sock.close()
    return [s for s in servers if s in answered] or servers


def _start_connect(server: str) -> socket.socket | None:
    host, _, port = server.rpartition(":")
    host = host.strip("[]")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, ValueError):
        return None
    sock.setblocking(False)
    try:
        sock.connect(address)
    except BlockingIOError:
        pass
    except OSError:
        sock.close()
        return None
    return sock
