"""Bearer tokens with roles, and HTTPS: who may call the registry, and over what."""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from tests.support.registry_process import RegistryProcess, call
from tests.support.tls import write_self_signed

SCHEMA = {"schema": json.dumps({"type": "record", "name": "Secret", "fields": []})}


@pytest.fixture(scope="module")
def guarded(registry_engine, tmp_path_factory):
    directory = tmp_path_factory.mktemp("guarded")
    tokens = directory / "tokens"
    tokens.write_text("# role token\nviewer viewer-token-123\noperator operator-token-456\n")
    keystore, ca = write_self_signed(directory)
    process = RegistryProcess(registry_engine.bootstrap, directory, [
        "--token-file", str(tokens), "--tls-cert", str(keystore), "--tls-key", str(keystore),
        "--group-id", "sr-guarded", "--topic", "_schemas_guarded"], name="guarded").start()
    yield process, ca
    process.kill()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def test_no_credential_is_401_with_a_challenge(guarded):
    process, ca = guarded
    context = ssl.create_default_context(cafile=str(ca))
    status, body, headers = call_tls(process.url + "/subjects", context)
    assert (status, body["error_code"]) == (401, 401)
    assert headers["WWW-Authenticate"].startswith("Basic")


def call_tls(url: str, context, method: str = "GET", body=None, headers: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json",
                                                                            **(headers or {})})
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers


def test_viewers_read_operators_write(guarded):
    process, ca = guarded
    context = ssl.create_default_context(cafile=str(ca))
    url = process.url + "/subjects/guarded/versions"
    status, body, _ = call_tls(url, context, "POST", SCHEMA, bearer("viewer-token-123"))
    assert (status, body["error_code"]) == (403, 403)
    status, body, _ = call_tls(url, context, "POST", SCHEMA, bearer("operator-token-456"))
    assert status == 200 and "id" in body
    assert call_tls(url, context, headers=bearer("viewer-token-123"))[1] == [1]
    # A lookup and a compatibility test are reads: a viewer may run them.
    status, found, _ = call_tls(process.url + "/subjects/guarded", context, "POST", SCHEMA, bearer("viewer-token-123"))
    assert status == 200 and found["version"] == 1
    status, _, _ = call_tls(url, context, headers=bearer("not-a-token"))
    assert status == 401


def test_confluent_client_over_https_with_a_token(guarded):
    process, ca = guarded
    client = SchemaRegistryClient({"url": process.url, "ssl.ca.location": str(ca),
                                   "bearer.auth.credentials.source": "STATIC_TOKEN",
                                   "bearer.auth.token": "operator-token-456",
                                   "bearer.auth.logical.cluster": "-", "bearer.auth.identity.pool.id": "-"})
    schema_id = client.register_schema("guarded-client", Schema(SCHEMA["schema"], "AVRO"))
    assert json.loads(client.get_schema(schema_id).schema_str) == json.loads(SCHEMA["schema"])
    viewer = SchemaRegistryClient({"url": process.url, "ssl.ca.location": str(ca),
                                   "bearer.auth.credentials.source": "STATIC_TOKEN",
                                   "bearer.auth.token": "viewer-token-123",
                                   "bearer.auth.logical.cluster": "-", "bearer.auth.identity.pool.id": "-"})
    with pytest.raises(SchemaRegistryError) as refused:
        viewer.register_schema("guarded-client-2", Schema(SCHEMA["schema"], "AVRO"))
    assert refused.value.http_status_code == 403


def test_a_missing_token_file_is_created_with_one_admin_token(registry_engine, tmp_path):
    tokens = tmp_path / "new-tokens"
    process = RegistryProcess(registry_engine.bootstrap, tmp_path, [
        "--token-file", str(tokens), "--group-id", "sr-newtokens", "--topic", "_schemas_newtokens"],
        name="newtokens").start()
    try:
        role, token = tokens.read_text().split()
        assert role == "admin" and len(token) >= 32
        assert tokens.stat().st_mode & 0o777 == 0o600
        assert call(process.url + "/subjects", headers=bearer(token))[0] == 200
        assert call(process.url + "/subjects")[0] == 401
    finally:
        process.kill()
