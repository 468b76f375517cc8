"""The console's OAuth access tokens (console/kafka_gateway/oauth_tokens.py) against a local
token endpoint (tests/support/oauth_endpoint.py): one request however many threads ask, the
token kept until shortly before it expires, and every failure a sentence naming the endpoint
and the reason, never the secret."""
import socket
import threading

import pytest

from console.kafka_gateway.oauth_tokens import ClientCredentials, TokenCache, TokenEndpointError
from tests.support.oauth import IdentityProvider
from tests.support.oauth_endpoint import REDIRECT_PATH, TokenEndpoint
from tests.support.tls import write_self_signed

CLIENT_ID, SECRET = "console", "Token-Client-5ecret"


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    return IdentityProvider(tmp_path_factory.mktemp("idp"))


@pytest.fixture(scope="module")
def endpoint(provider):
    endpoint = TokenEndpoint(provider, {CLIENT_ID: SECRET}).start()
    yield endpoint
    endpoint.stop()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def credentials(url: str, *, secret: str = SECRET, scope: str = "") -> ClientCredentials:
    return ClientCredentials(token_endpoint_url=url, client_id=CLIENT_ID, client_secret=secret, scope=scope)


def test_threads_asking_at_once_share_one_request(endpoint):
    cache, tokens = TokenCache(), []
    before = endpoint.calls[CLIENT_ID]
    start = threading.Barrier(8)

    def ask():
        start.wait()
        tokens.append(cache.token(credentials(endpoint.url, scope="threads"), timeout_s=10))
    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(tokens) == 8 and len(set(tokens)) == 1
    assert endpoint.calls[CLIENT_ID] == before + 1 and endpoint.scopes[-1] == "threads"


@pytest.mark.parametrize("expires_in", [600, None], ids=["expires_in", "the JWT's exp"])
def test_a_token_is_renewed_a_minute_before_it_expires(provider, expires_in):
    endpoint = TokenEndpoint(provider, {CLIENT_ID: SECRET}, expires_in=expires_in).start()
    try:
        clock = Clock()
        cache = TokenCache(clock=clock)
        first = cache.token(credentials(endpoint.url), timeout_s=10)
        clock.now += 530
        assert cache.token(credentials(endpoint.url), timeout_s=10) == first
        assert endpoint.calls[CLIENT_ID] == 1
        clock.now += 15                  # 545 s of 600: within the last minute
        cache.token(credentials(endpoint.url), timeout_s=10)
        assert endpoint.calls[CLIENT_ID] == 2
    finally:
        endpoint.stop()


def test_a_wrong_secret_is_refused_in_a_sentence_and_never_gets_the_right_secrets_token(endpoint):
    cache = TokenCache()
    cache.token(credentials(endpoint.url), timeout_s=10)
    with pytest.raises(TokenEndpointError) as refused:
        cache.token(credentials(endpoint.url, secret="Wrong-5ecret"), timeout_s=10)
    assert str(refused.value) == (f"The OAuth token endpoint {endpoint.url} refused the client 'console': HTTP 401, "
                                  "invalid_client (Client authentication failed.).")
    assert "5ecret" not in str(refused.value) and "5ecret" not in repr(credentials(endpoint.url))


def test_what_is_not_a_token_endpoint_is_said_so(endpoint):
    cache = TokenCache()
    with pytest.raises(TokenEndpointError, match=r"refused the client 'console': HTTP 404 \(Not Found\)\.$"):
        cache.token(credentials(endpoint.url_for("/elsewhere")), timeout_s=10)
    before = endpoint.calls[CLIENT_ID]
    with pytest.raises(TokenEndpointError, match="answered HTTP 302 .a redirect, which the console does not follow"):
        cache.token(credentials(endpoint.url_for(REDIRECT_PATH)), timeout_s=10)
    assert endpoint.calls[CLIENT_ID] == before          # the credentials did not follow the redirect


def test_an_endpoint_that_cannot_be_reached_or_does_not_answer_is_said_so():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(TokenEndpointError, match=rf"^Cannot reach the OAuth token endpoint "
                                                 rf"http://127.0.0.1:{port}/token: Connection refused\.$"):
        TokenCache().token(credentials(f"http://127.0.0.1:{port}/token"), timeout_s=5)
    with socket.socket() as silent:              # listens, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/token"
        with pytest.raises(TokenEndpointError, match=rf"^The OAuth token endpoint {url} did not answer within 0.3 s\.$"):
            TokenCache().token(credentials(url), timeout_s=0.3)


def test_an_https_endpoint_is_trusted_through_the_system_trust_store_or_ssl_cert_file(provider, tmp_path,
                                                                                      monkeypatch):
    keystore, ca = write_self_signed(tmp_path)
    endpoint = TokenEndpoint(provider, {CLIENT_ID: SECRET}, tls_keystore=keystore).start()
    try:
        with pytest.raises(TokenEndpointError) as untrusted:
            TokenCache().token(credentials(endpoint.url), timeout_s=10)
        assert str(untrusted.value) == (f"Cannot reach the OAuth token endpoint {endpoint.url}: the console does "
                                        "not trust its certificate (self-signed certificate); SSL_CERT_FILE names "
                                        "the CA bundle to trust.")
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        assert TokenCache().token(credentials(endpoint.url), timeout_s=10) in endpoint.issued
    finally:
        endpoint.stop()
