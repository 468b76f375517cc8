"""The engine admin token on the console's side: where it comes from, that every call carries
it, and that it never shows in a message, a repr or the audit log.

The last test runs against the real engine, which enforces the token (engine/admin_token.py).
The first also records the exact header sent, with a small HTTP listener that answers as the
engine's admin port does (JSON broker list, 401 with a JSON error)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from console.clusters.models import Cluster
from console.clusters.services import cluster_create
from console.errors import ConsoleError
from console.kafka_gateway import GatewayError, engine_admin

TOKEN = "tok-" + "x" * 40


class AdminPort(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def _answer(self, status: int, body) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.seen.append(dict(self.headers))
        if self.headers.get("X-Engine-Admin-Token") != TOKEN:
            return self._answer(401, {"error": "missing or wrong admin token"})
        self._answer(200, [{"id": 0, "host": "127.0.0.1", "port": 9092, "running": True}])

    def log_message(self, *args):
        pass


@pytest.fixture
def admin_port():
    AdminPort.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), AdminPort)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_every_call_carries_the_token_and_a_refusal_names_no_secret(admin_port):
    brokers = engine_admin.list_brokers(admin_port, token=TOKEN, timeout=5)
    assert [b.node_id for b in brokers] == [0]
    assert AdminPort.seen[-1]["X-Engine-Admin-Token"] == TOKEN
    with pytest.raises(GatewayError) as refused:
        engine_admin.list_brokers(admin_port, token="wrong-token", timeout=5)
    message = str(refused.value)
    assert "missing or wrong admin token" in message and "ENGINE_ADMIN_TOKEN" in message
    assert "wrong-token" not in message and TOKEN not in message


def test_the_bundled_engine_token_comes_from_the_environment_or_its_file(db, settings, tmp_path):
    bundled = Cluster.objects.get(is_bundled=True)
    token_file = tmp_path / "admin.token"
    token_file.write_text(TOKEN + "\n")
    settings.ENGINE_ADMIN_TOKEN, settings.ENGINE_ADMIN_TOKEN_FILE = "", token_file
    assert bundled.connection_settings().engine_admin_token == TOKEN
    settings.ENGINE_ADMIN_TOKEN = "from-env"
    assert bundled.connection_settings().engine_admin_token == "from-env"
    settings.ENGINE_ADMIN_TOKEN, settings.ENGINE_ADMIN_TOKEN_FILE = "", tmp_path / "missing"
    assert bundled.connection_settings().engine_admin_token == ""


def test_other_clusters_name_a_console_secret_variable(db, monkeypatch):
    other = cluster_create(name="remote engine", bootstrap_servers="10.0.0.1:9092",
                           admin_token_env="CONSOLE_SECRET_REMOTE_ADMIN")
    monkeypatch.setenv("CONSOLE_SECRET_REMOTE_ADMIN", TOKEN)
    connection = other.connection_settings()
    assert connection.engine_admin_token == TOKEN
    assert TOKEN not in repr(connection)                      # tracebacks and logs show reprs
    monkeypatch.delenv("CONSOLE_SECRET_REMOTE_ADMIN")
    with pytest.raises(ConsoleError, match="CONSOLE_SECRET_REMOTE_ADMIN, which is empty"):
        other.connection_settings()
    assert cluster_create(name="kafka", bootstrap_servers="10.0.0.2:9092").connection_settings().engine_admin_token == ""


def test_against_the_real_engine_only_the_right_token_opens_the_admin_port(db, engine_cluster, settings, monkeypatch):
    """The engine enforces the token: no token, a wrong one, the file's one."""
    from console.clusters.gateway import cluster_gateway

    def brokers_of(cluster):
        with cluster_gateway(cluster) as gw:
            return gw.engine_brokers(gw.engine_admin_endpoint(via_broker=0))

    bundled = Cluster.objects.get(is_bundled=True)
    bundled.bootstrap_servers = engine_cluster.bootstrap
    bundled.save()
    # The bundled engine's token from the file the engine wrote in its data dir.
    settings.ENGINE_ADMIN_TOKEN, settings.ENGINE_ADMIN_TOKEN_FILE = "", engine_cluster.data_dir / "admin.token"
    assert [b.node_id for b in brokers_of(bundled)] == [0, 1, 2]

    untokened = cluster_create(name="no token", bootstrap_servers=engine_cluster.bootstrap)
    with pytest.raises(GatewayError, match="no admin token"):
        brokers_of(untokened)
    monkeypatch.setenv("CONSOLE_SECRET_WRONG", "not-the-token")
    wrong = cluster_create(name="wrong token", bootstrap_servers=engine_cluster.bootstrap,
                           admin_token_env="CONSOLE_SECRET_WRONG")
    with pytest.raises(GatewayError, match="a wrong admin token") as refused:
        brokers_of(wrong)
    assert "not-the-token" not in str(refused.value) and engine_cluster.admin_token not in str(refused.value)
