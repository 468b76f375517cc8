"""Why a TLS connection to a broker fails, in words, for when a client only says it timed out.

kafka-python reports a TLS failure (an untrusted certificate, a host name that does not match, a
client certificate the broker refuses) as a bootstrap that never finished. When a cluster on
SSL or SASL_SSL cannot be reached, the gateway makes one TLS connection of its own to a listed
server with the same stores (tls_stores.py) and reads OpenSSL's reason; stores that cannot be
read (a wrong password, a JKS store) say so without a connection. With TLS 1.3 a broker that
wants a client certificate says so only after the handshake, so the check also waits briefly
for that alert.
"""
from __future__ import annotations

import contextlib
import socket
import ssl

from console.kafka_gateway.records import ConnectionSettings
from console.kafka_gateway.tls_stores import TlsStoreError, ssl_context

_ALERT_WAIT_S = 0.5


def tls_refusal(settings: ConnectionSettings, server: str, *, timeout_s: float = 2.0) -> str | None:
    """A sentence saying why a TLS connection to `server` fails with the settings' stores, or None
    when it does not fail (or the server is not reachable at all: the client says that)."""
    host, _, port = server.rpartition(":")
    host = host.strip("[]")
    try:
        context = ssl_context(settings)
    except TlsStoreError as exc:
        return str(exc)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s) as raw:
            with context.wrap_socket(raw, server_hostname=host) as tls:
                tls.settimeout(_ALERT_WAIT_S)
                with contextlib.suppress(TimeoutError):
                    # The broker sends nothing before a request: what comes is an alert or the end.
                    if tls.recv(1) == b"":
                        return _wants_certificate(server, "it closed the connection after the handshake")
        return None
    except ssl.SSLCertVerificationError as exc:
        return f"the TLS handshake with {server} failed: the console does not trust the broker's certificate " \
               f"({exc.verify_message or _reason(exc)}); name the cluster's CA file"
    except ssl.SSLError as exc:
        if "certificate required" in str(exc).lower() or "handshake failure" in str(exc).lower():
            return _wants_certificate(server, _reason(exc))
        return f"the TLS handshake with {server} failed ({_reason(exc)})"
    except (OSError, ValueError):
        return None


def _wants_certificate(server: str, how: str) -> str:
    return (f"the TLS handshake with {server} failed: the broker wants a client certificate it trusts ({how}); "
            "name the console's certificate and key files")


def _reason(exc: Exception) -> str:
    return getattr(exc, "reason", None) or str(exc)
