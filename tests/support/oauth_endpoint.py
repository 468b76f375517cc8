"""A local OAuth 2 token endpoint for SASL OAUTHBEARER tests: the client credentials grant
(RFC 6749 section 4.4) on an http.server thread, answering with JWTs the test identity provider
(tests/support/oauth.py) signs, whose subject is the client id.

It checks what a real identity provider does: POST, `grant_type=client_credentials`, the
client's id and secret in HTTP Basic authentication (as the console and librdkafka send them),
and it answers refusals as RFC 6749 section 5.2 says (`{"error": "invalid_client", ...}`, 401).
`calls` counts the requests by client id, so tests see when a token is reused."""
from __future__ import annotations

import base64
import json
import ssl
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.oauth import IdentityProvider

PATH = "/oauth2/token"
REDIRECT_PATH = "/moved/token"      # answers 302 to PATH: a client must not send its credentials on


class TokenEndpoint:
    def __init__(self, provider: IdentityProvider, clients: dict[str, str], *, expires_in: int | None = 600,
                 tls_keystore: Path | None = None) -> None:
        """`clients`: {client id: secret}. `expires_in` None: the answer leaves it out.
        `tls_keystore`: a PEM file with the key and certificate, to answer over https."""
        self.provider, self.clients, self.expires_in = provider, dict(clients), expires_in
        self.calls: Counter[str] = Counter()     # token requests by client id (refused ones too)
        self.scopes: list[str | None] = []       # the scope of each granted request
        self.issued: list[str] = []              # the access tokens handed out
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.scheme = "http"
        if tls_keystore is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls_keystore)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="oauth-token-endpoint", daemon=True)

    @property
    def url(self) -> str:
        return self.url_for(PATH)

    def url_for(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self._server.server_address[1]}{path}"

    def start(self) -> TokenEndpoint:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def answer(self, *, path: str, authorization: str | None,
               form: dict[str, list[str]]) -> tuple[int, dict | None]:
        """(status, JSON answer); None: a 404 or 302 with no JSON, as a web server's own."""
        if path == REDIRECT_PATH:
            return 302, None
        if path != PATH:
            return 404, None
        client_id, secret = _basic(authorization)
        with self._lock:
            self.calls[client_id or ""] += 1
        if client_id is None or self.clients.get(client_id) != secret:
            return 401, {"error": "invalid_client", "error_description": "Client authentication failed."}
        if form.get("grant_type") != ["client_credentials"]:
            return 400, {"error": "unsupported_grant_type"}
        scope = form.get("scope", [None])[0]
        token = self.provider.token(client_id)
        with self._lock:
            self.scopes.append(scope)
            self.issued.append(token)
        answer = {"access_token": token, "token_type": "Bearer"}
        if self.expires_in is not None:
            answer["expires_in"] = self.expires_in
        if scope:
            answer["scope"] = scope
        return 200, answer


def _basic(authorization: str | None) -> tuple[str | None, str | None]:
    if not authorization or not authorization.startswith("Basic "):
        return None, None
    try:
        client_id, _, secret = base64.b64decode(authorization[len("Basic "):]).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None, None
    return client_id, secret


def _handler(endpoint: TokenEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            status, answer = endpoint.answer(path=self.path, authorization=self.headers.get("Authorization"),
                                             form=urllib.parse.parse_qs(body))
            self._send(status, answer)

        def do_GET(self) -> None:
            self._send(405, {"error": "invalid_request", "error_description": "POST the token request."})

        def _send(self, status: int, answer: dict | None) -> None:
            data = json.dumps(answer).encode() if answer is not None else b"<html>not here</html>"
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if answer is not None else "text/html")
            if status == 302:
                self.send_header("Location", PATH)
            self.send_header("Cache-Control", "no-store")
            if status == 401:
                self.send_header("WWW-Authenticate", 'Basic realm="token"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args) -> None:   # noqa: A002 - http.server's signature
            pass
    return Handler
