"""A SASL listener before the login: frames are capped at `sasl.server.max.receive.size`, so a
client that has not proved who it is cannot make the broker hold its 100 MiB request."""
import socket
import struct

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.engine.protocol.test_bad_input import build_batch, create_topic, fetch_all, produce
from tests.engine.protocol.test_fuzz import rss_bytes
from tests.support.raw_client import RawClient
from tests.support.sasl import ADMIN, ADMIN_PASSWORD, authenticate, handshake, start_sasl_engine

HOSTILE_CONNECTIONS = 50
HUGE_PREFIX = 100 * 1024 * 1024
PARTIAL_BODY = 3 * 1024 * 1024          # 50 of them: 150 MiB if the broker buffered them
RSS_ALLOWANCE = 64 * 1024 * 1024
SASL_MAX_RECEIVE = 524288               # Kafka's default sasl.server.max.receive.size


@pytest.fixture(scope="module")
def sasl_engine(tmp_path_factory):
    engine = start_sasl_engine(tmp_path_factory.mktemp("pre-auth"), brokers=1)
    yield engine
    engine.kill()


def logged_in(port: int) -> RawClient:
    client = RawClient(port, timeout=30)
    assert handshake(client, "PLAIN").error_code == 0
    assert authenticate(client, f"\0{ADMIN}\0{ADMIN_PASSWORD}".encode()).error_code == 0
    return client


def api_versions(client: RawClient):
    return client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3,
                          ApiVersionsResponse)


def send_prefix_and_body(port: int, size: int, body: int) -> socket.socket:
    """Claim `size` bytes, send `body` of them, and keep the connection open."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        sock.sendall(struct.pack(">i", size))
        chunk = bytes(1 << 20)
        for _ in range(body >> 20):
            sock.sendall(chunk)
    except OSError:       # the broker closed it: what is asserted below
        pass
    return sock


def closed_by_peer(sock: socket.socket) -> bool:
    sock.settimeout(30)
    try:
        while chunk := sock.recv(65536):
            if not chunk:
                break
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def test_a_frame_over_the_pre_login_cap_closes_the_connection_before_its_body(sasl_engine):
    port = sasl_engine.ports[0]
    over = send_prefix_and_body(port, SASL_MAX_RECEIVE + 1, 0)
    try:
        assert closed_by_peer(over)          # at once: not one byte of the body was sent
    finally:
        over.close()
    before_login = RawClient(port)           # a request within the cap is served as before
    try:
        assert api_versions(before_login).error_code == 0
    finally:
        before_login.close()
    assert "outside 1..524288 (sasl.server.max.receive.size, before authentication)" in sasl_engine.log_text()


def test_after_the_login_requests_up_to_socket_request_max_bytes_are_read(sasl_engine, topic_name):
    client = logged_in(sasl_engine.ports[0])
    try:
        assert create_topic(client, topic_name) == 0
        big = build_batch([bytes(300_000), bytes(300_000)])        # 600 kB: over the pre-login cap
        assert len(big) > SASL_MAX_RECEIVE
        assert produce(client, topic_name, bytes(big)) == 0
        assert len(fetch_all(client, topic_name)) >= len(big)
    finally:
        client.close()


def test_fifty_huge_unauthenticated_prefixes_keep_memory_flat_and_others_served(sasl_engine, topic_name):
    port, pid = sasl_engine.ports[0], sasl_engine.process.pid
    client = logged_in(port)
    hostile: list[socket.socket] = []
    try:
        assert create_topic(client, topic_name) == 0
        assert produce(client, topic_name, bytes(build_batch([b"before"]))) == 0
        idle = rss_bytes(pid)
        peak = idle
        for i in range(HOSTILE_CONNECTIONS):
            hostile.append(send_prefix_and_body(port, HUGE_PREFIX, PARTIAL_BODY))
            peak = max(peak, rss_bytes(pid))
            if i % 10 == 9:                      # a well-behaved client is served throughout
                assert api_versions(client).error_code == 0
                assert produce(client, topic_name, bytes(build_batch([f"during-{i}".encode()]))) == 0
                fresh = logged_in(port)
                fresh.close()
        peak = max(peak, rss_bytes(pid))
        assert peak - idle < RSS_ALLOWANCE, f"RSS grew {(peak - idle) >> 20} MiB over 50 unauthenticated frames"
        assert all(closed_by_peer(sock) for sock in hostile)
        assert fetch_all(client, topic_name).count(b"during-") == HOSTILE_CONNECTIONS // 10
        print(f"\nRSS idle {idle >> 20} MiB, peak {peak >> 20} MiB with {HOSTILE_CONNECTIONS} hostile connections")
    finally:
        client.close()
        for sock in hostile:
            sock.close()
