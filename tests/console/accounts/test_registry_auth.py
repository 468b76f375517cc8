"""The schema registry's HTTP basic auth checks the console's users through /api/whoami."""
from __future__ import annotations

import base64
import json

import pytest

from console.accounts.services import user_create
from tests.support.registry_process import RegistryProcess, call

SCHEMA = {"schema": json.dumps({"type": "record", "name": "ByUser", "fields": []})}


def basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def console_users(transactional_db):
    user_create(username="reg-viewer", password="viewer-password-1", role="viewer")
    user_create(username="reg-operator", password="operator-password-1", role="operator")


def test_whoami_names_the_caller_and_role(client, console_users):
    status = client.get("/api/whoami")
    assert status.status_code == 401
    answer = client.get("/api/whoami", HTTP_AUTHORIZATION=basic("reg-operator", "operator-password-1")["Authorization"])
    assert answer.json() == {"username": "reg-operator", "role": "operator"}


def test_registry_users_are_the_consoles(live_server, console_users, engine_factory, tmp_path):
    engine = engine_factory(brokers=1, configs={"group.initial.rebalance.delay.ms": "100"})
    registry = RegistryProcess(engine.bootstrap, tmp_path, ["--auth-url", live_server.url]).start()
    try:
        url = registry.url + "/subjects/by-user/versions"
        assert call(url, "POST", SCHEMA)[0] == 401
        assert call(url, "POST", SCHEMA, headers=basic("reg-operator", "wrong-password"))[0] == 401
        status, body, _ = call(url, "POST", SCHEMA, headers=basic("reg-viewer", "viewer-password-1"))
        assert (status, body["error_code"]) == (403, 403)
        status, body, _ = call(url, "POST", SCHEMA, headers=basic("reg-operator", "operator-password-1"))
        assert status == 200 and body["id"] == 1
        assert call(url, headers=basic("reg-viewer", "viewer-password-1"))[1] == [1]
        assert "viewer-password-1" not in registry.log_text() and "operator-password-1" not in registry.log_text()
    finally:
        registry.kill()
