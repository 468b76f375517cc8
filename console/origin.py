"""Websocket origin check: a socket is accepted only from a page of the console's own origin.

Channels' AllowedHostsOriginValidator compares host names only, so a page served by another
service on the same host (another port) could open the console's sockets with the user's
cookies. Here scheme, host and port must all match: by default the origin the socket itself
was opened on (ws -> http, wss -> https, default ports filled in), or exactly
CONSOLE_ORIGIN when the console sits behind a proxy that changes the scheme or port.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


def normalized_origin(value: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin or URL, None when it is not one."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def socket_origin(scope) -> tuple[str, str, int] | None:
    """The origin a page must have to open this socket."""
    if settings.CONSOLE_ORIGIN:
        return normalized_origin(settings.CONSOLE_ORIGIN)
    headers = dict(scope.get("headers") or ())
    host = headers.get(b"host", b"").decode("latin-1")
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    return normalized_origin(f"{scheme}://{host}")


def same_origin(scope) -> bool:
    headers = dict(scope.get("headers") or ())
    origin = normalized_origin(headers.get(b"origin", b"").decode("latin-1"))
    expected = socket_origin(scope)
    return (origin is not None and origin == expected
            and validate_host(origin[1], settings.ALLOWED_HOSTS))


class SameOriginValidator:
    """ASGI middleware: refuse (close before accept) a websocket from any other origin."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not same_origin(scope):
            denier = WebsocketDenier()
            return await denier(scope, receive, send)
        return await self.application(scope, receive, send)
