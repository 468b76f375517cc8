"""The Schemas section against a real registry: subjects, versions and diffs, the compatibility
preview, levels, modes, deletes; operators act (audited), viewers read, admins configure."""
from __future__ import annotations

import html as html_text
import json
import re

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from console.accounts.models import AuditLogEntry
from console.schema_registry.models import RegistrySettings
from tests.console.conftest import make_topic


def record(name: str, *fields) -> str:
    return json.dumps({"type": "record", "name": name, "fields": [{"name": f, "type": "string"} for f in fields]})


@pytest.fixture
def subject(request):
    return "v-" + re.sub(r"[^A-Za-z0-9]", "", request.node.name)[:60]


def text(response) -> str:
    return html_text.unescape(response.content.decode())


def register(console_registry, subject: str, schema: str, schema_type: str = "AVRO") -> int:
    return SchemaRegistryClient({"url": console_registry.url}).register_schema(subject, Schema(schema, schema_type))


def test_list_shows_type_version_level_and_topics(registry_cluster, console_registry, viewer_client, unique_topic):
    topic = make_topic(registry_cluster, unique_topic())
    register(console_registry, f"{topic}-value", record("Listed", "a"))
    schema_id = register(console_registry, f"{topic}-value", record("Listed", "a") .replace('}]}', '},{"name":"b","type":["null","string"],"default":null}]}'))
    page = viewer_client.get(f"/clusters/{registry_cluster.pk}/schemas/")
    assert page.status_code == 200
    html = text(page)
    row = re.search(rf'<tr data-subject="{topic}-value">(.*?)</tr>', html, re.S).group(1)
    assert "AVRO" in row and ">2<" in row and f">{schema_id}<" in row and "BACKWARD" in row
    assert f'href="/clusters/{registry_cluster.pk}/topics/{topic}/"' in row      # TopicNameStrategy
    assert "Register a schema" not in html                                          # a viewer reads only
    api = viewer_client.get(f"/api/clusters/{registry_cluster.pk}/schemas").json()
    assert any(r["subject"] == f"{topic}-value" and r["topics"] == [topic] for r in api["rows"])


def test_subject_page_versions_schema_and_diff(registry_cluster, console_registry, viewer_client, subject):
    register(console_registry, subject, record("Diffed", "a"))
    register(console_registry, subject, json.dumps({"type": "record", "name": "Diffed", "fields": [
        {"name": "a", "type": "string"}, {"name": "b", "type": "string", "default": "x"}]}))
    url = f"/clusters/{registry_cluster.pk}/schemas/subjects/{subject}/"
    html = text(viewer_client.get(url + "?version=1"))
    assert '<tr data-version="1" class="selected">' in html and '"name": "Diffed"' in html   # pretty-printed
    diff = text(viewer_client.get(url + "?a=1&b=2"))
    added = re.findall(r'<span class="diff-add">(.*?)</span>', diff)
    assert any('"name": "b"' in line for line in added)


def test_versions_too_long_to_diff_say_so(registry_cluster, console_registry, viewer_client, subject):
    """difflib is quadratic in the lines: these two 12,000-line versions would hold a console
    worker for half a minute."""
    SchemaRegistryClient({"url": console_registry.url}).set_compatibility(subject, "NONE")
    for kind in ("int", "long"):
        register(console_registry, subject, json.dumps({"type": "record", "name": "Wide", "fields": [
            {"name": f"f{i}" if i % 2 else f"g{i}", "type": kind if i % 3 else "string"} for i in range(3000)]}))
    diff = text(viewer_client.get(f"/clusters/{registry_cluster.pk}/schemas/subjects/{subject}/?a=1&b=2"))
    assert "are too long to compare here (at most 2,000 lines each)" in diff
    assert 'class="diff-add"' not in diff


def test_register_through_the_compatibility_preview(registry_cluster, console_registry, operator_client, subject):
    register(console_registry, subject, record("Previewed", "a"))
    url = f"/clusters/{registry_cluster.pk}/schemas/register"
    bad = {"subject": subject, "schema_type": "AVRO", "schema": record("Previewed", "a", "b"), "action": "preview"}
    page = text(operator_client.post(url, bad))
    assert 'id="incompatible"' in page and "READER_FIELD_MISSING_DEFAULT_VALUE" in page
    # In words, with the field, and the version it was checked against linked; the registry's own
    # notation only in the folded raw answer.
    problem = re.search(r'<li class="compat-problem".*?</li>', page, re.S).group(0)
    assert "A field without a default value</strong>: field <code>b</code>" in problem
    assert "in the new schema has no default value and is missing in the old schema." in problem
    assert "{errorType" not in problem
    checked = re.search(r'<p id="compat-checked">(.*?)</p>', page, re.S).group(1)
    assert re.sub(r"<[^>]+>", "", checked) == f"Checked against version 1 of {subject} under BACKWARD."
    assert f'href="/clusters/{registry_cluster.pk}/schemas/subjects/{subject}/?version=1"' in checked
    assert page.count("{errorType") == 1 and page.index("{errorType") > page.index('<details class="compat-raw"')
    assert 'id="register-schema"' not in page                # no button to register what the registry refuses
    good = {**bad, "schema": json.dumps({"type": "record", "name": "Previewed", "fields": [
        {"name": "a", "type": "string"}, {"name": "b", "type": "string", "default": ""}]})}
    page = text(operator_client.post(url, good))
    assert 'id="compatible"' in page and 'id="register-schema"' in page
    assert SchemaRegistryClient({"url": console_registry.url}).get_versions(subject) == [1]   # nothing yet
    done = operator_client.post(url, {**good, "action": "register"})
    assert done.status_code == 302 and done["Location"].endswith(f"/schemas/subjects/{subject}/")
    assert SchemaRegistryClient({"url": console_registry.url}).get_versions(subject) == [1, 2]
    entry = AuditLogEntry.objects.get(action="schema.register", target=subject)
    assert entry.result == AuditLogEntry.OK and entry.details["schema_id"]


def test_an_unparseable_schema_reads_as_the_registrys_sentence(registry_cluster, operator_client, subject):
    page = operator_client.post(f"/clusters/{registry_cluster.pk}/schemas/register",
                                {"subject": subject, "schema_type": "PROTOBUF", "schema": "message {",
                                 "action": "register"})
    html = text(page)
    assert page.status_code == 400 and "Invalid schema" in html and "schema registry error 42201" in html
    assert AuditLogEntry.objects.get(action="schema.register", target=subject).result == AuditLogEntry.FAILED


def test_level_and_mode_changes_are_audited(registry_cluster, console_registry, operator_client, subject):
    register(console_registry, subject, record("Levelled", "a"))
    base = f"/clusters/{registry_cluster.pk}/schemas"
    assert operator_client.post(f"{base}/compatibility", {"subject": subject, "level": "FULL"}).status_code == 302
    assert operator_client.post(f"{base}/mode", {"subject": subject, "mode": "READONLY"}).status_code == 302
    client = SchemaRegistryClient({"url": console_registry.url})
    assert client.get_compatibility(subject) == "FULL"
    html = text(operator_client.get(f"{base}/subjects/{subject}/"))
    assert 'id="subject-level">FULL<' in html and 'id="subject-mode">READONLY<' in html
    assert {e.action for e in AuditLogEntry.objects.filter(target=subject)} == {"schema.compatibility", "schema.mode"}
    operator_client.post(f"{base}/mode", {"subject": subject, "mode": "READWRITE"})


def test_soft_then_hard_delete_asks_first(registry_cluster, console_registry, operator_client, subject):
    register(console_registry, subject, record("Deleted", "a"))
    url = f"/clusters/{registry_cluster.pk}/schemas/delete"
    asked = operator_client.post(url, {"subject": subject})
    assert asked.status_code == 200 and "Soft delete subject" in text(asked)     # the confirmation page
    client = SchemaRegistryClient({"url": console_registry.url})
    assert client.get_versions(subject) == [1]
    assert operator_client.post(url, {"subject": subject, "confirmed": "yes"}).status_code == 302
    assert subject not in client.get_subjects()
    assert operator_client.post(url, {"subject": subject, "permanent": "on", "confirmed": "yes"}).status_code == 302
    assert subject not in client.get_subjects(deleted=True)
    actions = [(e.action, e.details["permanent"]) for e in AuditLogEntry.objects.filter(target=subject)]
    assert sorted(actions) == [("schema.delete_subject", False), ("schema.delete_subject", True)]


def test_viewers_cannot_write_and_posts_need_csrf(registry_cluster, viewer_client, users, subject):
    from django.test import Client
    base = f"/clusters/{registry_cluster.pk}/schemas"
    assert viewer_client.post(f"{base}/compatibility", {"level": "NONE"}).status_code == 403
    assert viewer_client.get(f"{base}/register").status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(users["operator"])
    assert strict.post(f"{base}/delete", {"subject": subject, "confirmed": "yes"}).status_code == 403


def test_admins_point_a_cluster_at_a_registry_by_secret_name(cluster, console_admin_client, operator_client):
    url = f"/clusters/{cluster.pk}/schemas/configure"
    assert operator_client.get(url).status_code == 403
    refused = console_admin_client.post(url, {"url": "https://registry.example:8081", "auth": "basic",
                                              "username": "svc", "secret_env": "SECRET_KEY"})
    assert refused.status_code == 400 and not RegistrySettings.objects.filter(cluster=cluster).exists()
    saved = console_admin_client.post(url, {"url": "https://registry.example:8081", "auth": "basic",
                                            "username": "svc", "secret_env": "CONSOLE_SECRET_REGISTRY_PASSWORD"})
    assert saved.status_code == 302
    row = RegistrySettings.objects.get(cluster=cluster)
    assert (row.url, row.auth, row.secret_env) == ("https://registry.example:8081", "basic",
                                                   "CONSOLE_SECRET_REGISTRY_PASSWORD")
    assert AuditLogEntry.objects.get(action="schema_registry.configure").result == AuditLogEntry.OK


def test_a_registry_address_holding_credentials_is_refused(cluster, console_admin_client, viewer_client):
    url = f"/clusters/{cluster.pk}/schemas/configure"
    refused = console_admin_client.post(url, {"url": "https://svc:pa55word@registry.example:8081", "auth": "none"})
    assert refused.status_code == 400 and "not in the address" in text(refused)
    assert not RegistrySettings.objects.filter(cluster=cluster).exists()
    assert "pa55word" not in json.dumps(list(AuditLogEntry.objects.values_list("details", flat=True)))
    assert "pa55word" not in text(viewer_client.get(f"/clusters/{cluster.pk}/schemas/"))


def test_a_cluster_without_a_registry_says_so(cluster, viewer_client):
    html = text(viewer_client.get(f"/clusters/{cluster.pk}/schemas/"))
    assert 'id="no-registry"' in html


def test_a_registry_that_does_not_answer_is_a_sentence(cluster, viewer_client):
    RegistrySettings.objects.create(cluster=cluster, url="http://127.0.0.1:9")
    html = text(viewer_client.get(f"/clusters/{cluster.pk}/schemas/"))
    assert 'id="registry-error"' in html and "does not answer" in html
