"""The Schemas section in a real browser: an admin points the cluster at a registry, an operator
registers a new version through the compatibility preview (refused first, then accepted),
compares two versions, and the message browser shows a record decoded by its schema id."""
from __future__ import annotations

import json
import re

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from playwright.sync_api import expect

from tests.support.registry_process import RegistryProcess

TOPIC = "browser-orders"
V1 = {"type": "record", "name": "Order", "namespace": "shop",
      "fields": [{"name": "id", "type": "string"}, {"name": "note", "type": "string"}]}


@pytest.fixture(scope="module")
def registry(console_server, tmp_path_factory):
    process = RegistryProcess(console_server.engine.bootstrap, tmp_path_factory.mktemp("browser-registry")).start()
    yield process
    process.kill()


def test_schemas_section_diff_and_a_message_decoded_by_schema_id(login, console_server, registry, shoot):
    client = SchemaRegistryClient({"url": registry.url})
    context = SerializationContext(TOPIC, MessageField.VALUE)
    framed = AvroSerializer(client, json.dumps(V1))({"id": "o-1", "note": "<script>alert(1)</script>"}, context)
    producer = Producer({"bootstrap.servers": console_server.engine.bootstrap})
    producer.produce(TOPIC, value=framed)
    assert producer.flush(30) == 0
    del producer
    schema_id = int.from_bytes(framed[1:5], "big")

    admin = login("admin")
    cluster_path = re.search(r"/clusters/\d+/", admin.url).group(0)
    admin.goto(cluster_path + "schemas/configure")
    admin.fill("#id_url", registry.url)
    admin.select_option("#id_auth", "none")
    admin.locator('[data-admin-action="save-registry"]').click()
    expect(admin.locator(".messages")).to_contain_text("Schema registry settings saved")

    operator = login("operator")
    dialogs: list[str] = []
    operator.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    operator.goto(cluster_path)
    operator.get_by_role("link", name="Schemas", exact=True).click()
    row = operator.locator(f'#subjects tr[data-subject="{TOPIC}-value"]')
    expect(row).to_contain_text("AVRO")
    expect(row).to_contain_text(TOPIC)

    row.get_by_role("link", name=f"{TOPIC}-value").click()
    operator.locator('[data-admin-action="register-version"]').click()
    expect(operator.locator("#id_schema")).to_contain_text('"name": "note"')    # starts from the latest version
    incompatible = {**V1, "fields": V1["fields"] + [{"name": "total", "type": "long"}]}
    operator.fill("#id_schema", json.dumps(incompatible, indent=2))
    operator.locator('[data-admin-action="preview-schema"]').click()
    expect(operator.locator("#incompatible")).to_be_visible()
    problem = operator.locator("#compat-messages li.compat-problem")
    expect(problem).to_have_count(1)
    expect(problem).to_contain_text("A field without a default value: field total at /fields/2.")
    expect(problem).to_contain_text("has no default value and is missing in the old schema.")
    expect(problem).not_to_contain_text("{errorType")
    expect(operator.locator("#compat-checked")).to_have_text(
        f"Checked against version 1 of {TOPIC}-value under BACKWARD.")
    expect(operator.locator("#compat-raw pre")).to_be_hidden()               # the raw answer, folded
    expect(operator.locator("#compat-raw pre")).to_contain_text("{oldSchemaVersion: 1}")
    shoot(operator, "schema-preview-incompatible")
    compatible = {**V1, "fields": V1["fields"] + [{"name": "total", "type": "long", "default": 0}]}
    operator.fill("#id_schema", json.dumps(compatible, indent=2))
    operator.locator('[data-admin-action="preview-schema"]').click()
    expect(operator.locator("#compatible")).to_be_visible()
    operator.locator('[data-admin-action="register-schema-confirm"]').click()
    expect(operator.locator(".messages")).to_contain_text("Registered under")
    assert client.get_versions(f"{TOPIC}-value") == [1, 2]

    operator.locator("#diff-form button").click()
    diff = operator.locator("#schema-diff")
    expect(diff.locator(".diff-add", has_text='"name": "total"')).to_have_count(1)
    shoot(operator, "schema-subject-diff")

    operator.goto(cluster_path + f"topics/{TOPIC}/messages/?start=oldest")
    value = operator.locator("td.msg-value").first
    expect(value).to_contain_text('"note": "<script>alert(1)</script>"')
    expect(value.locator(".schema-tag")).to_have_text(f"schema {schema_id} · {TOPIC}-value")
    assert operator.locator("td.msg-value script").count() == 0
    shoot(operator, "messages-decoded-by-schema-id")

    viewer = login("viewer", viewport={"width": 390, "height": 844})
    viewer.goto(cluster_path + f"schemas/subjects/{TOPIC}-value/")
    expect(viewer.locator("#versions tr[data-version]")).to_have_count(2)
    expect(viewer.locator("[data-admin-action]")).to_have_count(0)
    shoot(viewer, "schema-subject-viewer")
    assert not dialogs     # nothing on these pages asked the browser anything (no script ran)
