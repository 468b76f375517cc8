"""The Connect pages and their JSON API on a real worker: connectors with their states and a
failed task's trace, one connector with its config (secrets hidden), topics linked to their
pages and offsets, creating one from the plugin's form (Connect's errors per field) or from
JSON, actions behind a confirmation, role checks and CSRF."""
from __future__ import annotations

import json
import re

from django.test import Client

from console.accounts.models import AuditLogEntry
from console.connect import selectors
from tests.console.conftest import make_topic
from tests.support.waiting import wait_until


def _base(connect) -> str:
    return f"/clusters/{connect.cluster_id}/connect/{connect.pk}/"


def _running(connect, name: str, tasks: int = 1):
    def check():
        try:
            row = selectors.connector_detail(connect=connect, name=name).row
        except Exception:
            return None
        return row if row.state == "RUNNING" and len(row.tasks) == tasks and \
            all(t.state == "RUNNING" for t in row.tasks) else None
    return wait_until(check, 60, message=f"{name} running")


def test_create_from_the_plugins_form_with_connects_errors_then_act(connect_row, cluster, operator_client,
                                                                     viewer_client, users, tmp_path, unique_topic):
    topic = make_topic(cluster, unique_topic())
    source = tmp_path / "in.txt"
    source.write_text("a\nb\nc\n")
    page = operator_client.get(_base(connect_row) + "new", {"plugin": "FileStreamSource"})
    html = page.content.decode()
    assert page.status_code == 200
    for key in ("name", "tasks.max", "file", "topic", "batch.size"):
        assert f'name="{key}"' in html
    assert 'placeholder="2000"' in html                  # batch.size's default, from Connect's definition
    plugin = "org.apache.kafka.connect.file.FileStreamSourceConnector"

    checked = operator_client.post(_base(connect_row) + "new", {"mode": "form", "plugin": plugin, "name": "v-src",
                                                                "file": str(source), "batch.size": "x",
                                                                "submit": "validate"})
    assert checked.status_code == 400
    text = checked.content.decode()
    assert "Missing required configuration &quot;topic&quot; which has no default value." in text
    assert "Invalid value x for configuration batch.size: Not a number of type INT" in text

    created = operator_client.post(_base(connect_row) + "new", {"mode": "form", "plugin": plugin, "name": "v-src",
                                                                "file": str(source), "topic": topic,
                                                                "submit": "create"})
    assert created.status_code == 302 and created.url == _base(connect_row) + "connectors/v-src/"
    _running(connect_row, "v-src")

    listing = viewer_client.get(f"/clusters/{cluster.pk}/connect/").content.decode()
    assert re.search(r'data-connector="v-src".*?data-state="RUNNING".*?1 running', listing, re.S)
    assert 'data-admin-action="new-connector"' not in listing           # viewers do not create

    detail = wait_until(lambda: (html := viewer_client.get(_base(connect_row) + "connectors/v-src/")
                                 .content.decode()) and f'href="/clusters/{cluster.pk}/topics/{topic}/"' in html
                        and "position=6" in html and html, 30, message="topics and offsets on the page")
    assert "data-action=" not in detail                                   # nor act
    assert "<td>—</td>" in detail and "<td>-</td>" not in detail          # no trace: the console's dash

    asked = operator_client.post(_base(connect_row) + "connectors/v-src/action", {"action": "pause"})
    assert asked.status_code == 200 and b"Its tasks stop processing records" in asked.content
    assert selectors.connector_detail(connect=connect_row, name="v-src").row.state == "RUNNING"
    done = operator_client.post(_base(connect_row) + "connectors/v-src/action",
                                {"action": "pause", "confirmed": "yes"})
    assert done.status_code == 302
    wait_until(lambda: selectors.connector_detail(connect=connect_row, name="v-src").row.state == "PAUSED", 30,
               message="paused")
    assert viewer_client.post(_base(connect_row) + "connectors/v-src/action",
                              {"action": "delete", "confirmed": "yes"}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(users["operator"])
    assert strict.post(_base(connect_row) + "connectors/v-src/action",
                       {"action": "delete", "confirmed": "yes"}).status_code == 403
    operator_client.post(_base(connect_row) + "connectors/v-src/action", {"action": "delete", "confirmed": "yes"})
    assert list(AuditLogEntry.objects.filter(target="test connect/v-src").order_by("pk")
                .values_list("action", flat=True)) == \
        ["connect.connector.create", "connect.connector.pause", "connect.connector.delete"]


def test_a_failed_task_shows_its_trace_and_secrets_stay_hidden(connect_row, cluster, viewer_client, operator_client,
                                                                unique_topic):
    topic = make_topic(cluster, unique_topic())
    document = json.dumps({"name": "v-failing", "config": {
        "connector.class": "counting_plugin.CountingSourceConnector", "topic": topic, "count": "50",
        "fail.after": "5", "database.password": "s3cret-value"}})
    created = operator_client.post(_base(connect_row) + "new", {"mode": "json", "document": document,
                                                                "submit": "create"})
    assert created.status_code == 302, created.content.decode()[:2000]
    wait_until(lambda: (row := selectors.connector_detail(connect=connect_row, name="v-failing").row).tasks and
               row.tasks[0].state == "FAILED", 60, message="task failed")
    listing = viewer_client.get(f"/clusters/{cluster.pk}/connect/").content.decode()
    assert re.search(r'data-connector="v-failing" data-worst="FAILED"', listing)
    assert "counting task 0 gave up at 5 on purpose" in listing
    # The statuses' moment as every page writes one: local date, time and UTC offset, and an age.
    assert re.search(r'as of <span class="fetched-at"><time datetime="[^"]+" data-when title="[^"]+ UTC">'
                     r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d</time> <small class="ago"><time [^>]*data-ago>',
                     listing)
    detail = viewer_client.get(_base(connect_row) + "connectors/v-failing/").content.decode()
    assert "s3cret-value" not in detail and "[hidden]" in detail
    assert "counting task 0 gave up at 5 on purpose" in detail
    api = viewer_client.get(f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors/v-failing").json()
    assert api["config"]["database.password"] == "[hidden]" and api["row"]["tasks"][0]["state"] == "FAILED"
    assert "s3cret-value" not in json.dumps(list(AuditLogEntry.objects.values_list("details", flat=True)))
    restarted = operator_client.post(f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors/v-failing/"
                                     "restart-failed")
    assert restarted.status_code == 200 and restarted.json()["result"] == "v-failing: 1 failed task restarting."
    operator_client.post(_base(connect_row) + "connectors/v-failing/action", {"action": "delete", "confirmed": "yes"})


def test_json_api_lists_and_refuses_bad_configs(connect_row, cluster, operator_client, viewer_client):
    listed = viewer_client.get(f"/api/clusters/{cluster.pk}/connect").json()
    assert listed[0]["name"] == "test connect" and listed[0]["reachable"] and listed[0]["version"]
    bad = operator_client.post(f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors",
                               data=json.dumps({"name": "api-bad", "config": {"connector.class": "FileStreamSink"}}),
                               content_type="application/json")
    assert bad.status_code == 400
    assert "Must configure one of topics or topics.regex" in bad.json()["error"]
    unknown = operator_client.post(f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors",
                                   data=json.dumps({"name": "api-ghost", "config": {"connector.class": "Ghost"}}),
                                   content_type="application/json")
    assert unknown.status_code == 503 and "Failed to find any class" in unknown.json()["error"]
    assert viewer_client.post(f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors",
                              data="{}", content_type="application/json").status_code == 403


def test_only_admins_register_connect_clusters(cluster, console_admin_client, operator_client):
    assert operator_client.get(f"/clusters/{cluster.pk}/connect/add").status_code == 403
    refused = console_admin_client.post(f"/clusters/{cluster.pk}/connect/add",
                                        {"name": "dc", "url": "http://h:8083", "username": "u",
                                         "password_env": "DATABASE_URL"})
    assert refused.status_code == 400 and b"CONSOLE_SECRET_" in refused.content
    added = console_admin_client.post(f"/clusters/{cluster.pk}/connect/add", {"name": "dc", "url": "http://h:8083"})
    assert added.status_code == 302
    page = console_admin_client.get(f"/clusters/{cluster.pk}/connect/").content.decode()
    assert "cannot be reached" in page


def _create_counting(client, connect, name: str, topic: str, *, password: str) -> None:
    """A counting source connector of 5 numbers with a secret, created from JSON by `client`."""
    document = json.dumps({"name": name, "config": {
        "connector.class": "counting_plugin.CountingSourceConnector", "topic": topic, "count": "5",
        "database.password": password}})
    created = client.post(_base(connect) + "new", {"mode": "json", "document": document, "submit": "create"})
    assert created.status_code == 302, created.content.decode()[:2000]


def test_the_config_is_edited_as_json_validated_by_connect_with_secrets_kept(connect_row, cluster, operator_client,
                                                                             viewer_client, unique_topic):
    topic = make_topic(cluster, unique_topic())
    _create_counting(operator_client, connect_row, "v-edit", topic, password="s3cret-edit")
    url = _base(connect_row) + "connectors/v-edit/config"
    assert f'href="{url}"' in operator_client.get(_base(connect_row) + "connectors/v-edit/").content.decode()
    assert viewer_client.get(url).status_code == 403
    page = operator_client.get(url).content.decode()
    assert "s3cret-edit" not in page and "&quot;database.password&quot;: &quot;[hidden]&quot;" in page

    edited = {"connector.class": "counting_plugin.CountingSourceConnector", "topic": topic,
              "database.password": "[hidden]", "name": "v-edit"}
    refused = operator_client.post(url, {"document": json.dumps({**edited, "count": "0"}), "submit": "save"})
    assert refused.status_code == 400
    assert "count: Invalid value 0 for configuration count: Value must be at least 1" in refused.content.decode()
    renamed = operator_client.post(url, {"document": json.dumps({**edited, "name": "v-other"}), "submit": "save"})
    assert renamed.status_code == 400 and "name cannot change" in renamed.content.decode()
    checked = operator_client.post(url, {"document": json.dumps({**edited, "count": "7"}), "submit": "validate"})
    assert checked.status_code == 200 and 'id="validated"' in checked.content.decode()

    saved = operator_client.post(url, {"document": json.dumps({**edited, "count": "7"}), "submit": "save"})
    assert saved.status_code == 302 and saved.url == _base(connect_row) + "connectors/v-edit/"
    config = selectors.client_for(connect_row).connector("v-edit")["config"]
    assert config["count"] == "7" and config["database.password"] == "s3cret-edit"
    entries = list(AuditLogEntry.objects.filter(action="connect.connector.config").order_by("pk"))
    assert [e.result for e in entries] == ["failed", "failed", "ok"]
    assert entries[-1].details["changed"] == ["count"]
    assert "s3cret-edit" not in json.dumps([e.details for e in entries])
    _running(connect_row, "v-edit")
    api = f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors/v-edit/config"
    answer = operator_client.post(api, data=json.dumps({**edited, "count": "9"}), content_type="application/json")
    assert answer.status_code == 200 and answer.json()["count"] == "9"
    assert answer.json()["database.password"] == "[hidden]"
    assert selectors.client_for(connect_row).connector("v-edit")["config"]["database.password"] == "s3cret-edit"
    bad = operator_client.post(api, data=json.dumps({**edited, "count": "0"}), content_type="application/json")
    assert bad.status_code == 400 and "Value must be at least 1" in bad.json()["error"]
    assert viewer_client.post(api, data="{}", content_type="application/json").status_code == 403
    operator_client.post(_base(connect_row) + "connectors/v-edit/action", {"action": "delete", "confirmed": "yes"})


def test_the_config_is_edited_in_the_plugins_form_with_defaults_and_secrets_kept(connect_row, cluster,
                                                                                   operator_client, unique_topic):
    """The edit page's form mode: the plugin's fields filled with the connector's values; a field
    changed is saved, a field emptied goes back to its default, a key the plugin does not define
    (a secret here) keeps its value, and Connect's refusal lands on its field."""
    topic = make_topic(cluster, unique_topic())
    _create_counting(operator_client, connect_row, "v-form", topic, password="s3cret-form")
    url = _base(connect_row) + "connectors/v-form/config"
    page = operator_client.get(url, {"mode": "form"}).content.decode()
    assert re.search(r'<input[^>]*name="count"[^>]*value="5"', page) and "s3cret-form" not in page
    assert re.search(rf'<input[^>]*name="topic"[^>]*value="{re.escape(topic)}"', page)

    refused = operator_client.post(url, {"mode": "form", "name": "v-form", "topic": topic, "count": "0",
                                         "submit": "save"})
    assert refused.status_code == 400
    assert re.search(r'data-key="count">.*?Value must be at least 1', refused.content.decode(), re.S)
    saved = operator_client.post(url, {"mode": "form", "name": "v-form", "topic": topic, "count": "7",
                                       "submit": "save"})
    assert saved.status_code == 302
    config = selectors.client_for(connect_row).connector("v-form")["config"]
    assert config["count"] == "7" and config["database.password"] == "s3cret-form" and config["topic"] == topic

    emptied = operator_client.post(url, {"mode": "form", "name": "v-form", "topic": topic, "count": "",
                                         "submit": "save"})
    assert emptied.status_code == 302
    config = selectors.client_for(connect_row).connector("v-form")["config"]
    assert "count" not in config and config["database.password"] == "s3cret-form"
    assert AuditLogEntry.objects.filter(action="connect.connector.config", target__endswith="/v-form").latest(
        "pk").details["changed"] == ["count"]
    operator_client.post(_base(connect_row) + "connectors/v-form/action", {"action": "delete", "confirmed": "yes"})


def test_the_plugins_form_grows_the_fields_of_each_transform_it_names(connect_row, cluster, operator_client, tmp_path,
                                                                     unique_topic):
    """Connect lists an alias's keys once the form names it (and then its class): the form shows
    them as fields, Connect's errors on them, and the connector is created with the transform."""
    topic = make_topic(cluster, unique_topic())
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    plugin = "org.apache.kafka.connect.file.FileStreamSourceConnector"
    base = {"mode": "form", "plugin": plugin, "name": "smt-src", "file": str(source), "topic": topic,
            "submit": "validate"}
    named = operator_client.post(_base(connect_row) + "new", {**base, "transforms": "route"}).content.decode()
    assert 'name="transforms.route.type"' in named and "Transforms: route" in named
    typed = operator_client.post(_base(connect_row) + "new", {
        **base, "transforms": "route", "transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*)"})
    text = typed.content.decode()
    assert typed.status_code == 400 and 'name="transforms.route.replacement"' in text
    assert "Missing required configuration &quot;transforms.route.replacement&quot; which has no default" in text
    created = operator_client.post(_base(connect_row) + "new", {
        **base, "submit": "create", "transforms": "route", "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1-routed"})
    assert created.status_code == 302
    config = selectors.connector_config(connect=connect_row, name="smt-src")
    assert config["transforms.route.replacement"] == "$1-routed"
    selectors.client_for(connect_row).delete("smt-src")


def test_kafka_client_and_serializer_secrets_under_any_prefix_stay_hidden(connect_row, cluster, operator_client,
                                                                           viewer_client, unique_topic):
    topic = make_topic(cluster, unique_topic())
    secrets = {"value.converter.basic.auth.user.info": "alice:basic-pw-1",
               "producer.override.ssl.keystore.key": "pem-key-2",
               "producer.override.ssl.truststore.certificates": "pem-certs-3", "database.password": "db-pw-4"}
    created = operator_client.post(f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors",
                                   data=json.dumps({"name": "v-prefixed", "config": {
                                       "connector.class": "counting_plugin.CountingSourceConnector",
                                       "topic": topic, "count": "1", **secrets}}),
                                   content_type="application/json")
    assert created.status_code == 200, created.content.decode()[:2000]
    assert all(created.json()["config"][key] == "[hidden]" for key in secrets)
    shown = [created.content.decode(),
             viewer_client.get(_base(connect_row) + "connectors/v-prefixed/").content.decode(),
             viewer_client.get(f"/api/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors/v-prefixed").content
             .decode(),
             operator_client.get(_base(connect_row) + "connectors/v-prefixed/config").content.decode(),
             json.dumps(list(AuditLogEntry.objects.values_list("details", flat=True)))]
    for value in secrets.values():
        assert not any(value in text for text in shown), value
    operator_client.post(_base(connect_row) + "connectors/v-prefixed/action", {"action": "delete", "confirmed": "yes"})


def test_a_json_form_shown_back_hides_the_secrets_typed_in_it(connect_row, cluster, operator_client, unique_topic):
    topic = make_topic(cluster, unique_topic())
    config = {"connector.class": "counting_plugin.CountingSourceConnector", "topic": topic,
              "database.password": "typed-s3cret-1", "count": "0"}
    # Connect refuses count=0: the page comes back with its errors, and without the secret.
    checked = operator_client.post(_base(connect_row) + "new", {
        "mode": "json", "document": json.dumps({"name": "v-typed", "config": config}), "submit": "validate"})
    page = checked.content.decode()
    assert checked.status_code == 400 and "Value must be at least 1" in page
    assert "typed-s3cret-1" not in page and "&quot;database.password&quot;: &quot;[hidden]&quot;" in page
    assert "Secrets are not shown back (database.password): type them again." in page
    # A document that is not JSON is shown back to be mended, without its secrets either.
    broken = operator_client.post(_base(connect_row) + "new", {
        "mode": "json", "document": '{"name": "v-typed", "config": {"database.password": "typed-s3cret-2",',
        "submit": "create"}).content.decode()
    assert "This is not JSON" in broken and "typed-s3cret-2" not in broken
    # Sent again as shown, [hidden] would become the password: a new connector has none to keep.
    again = operator_client.post(_base(connect_row) + "new", {
        "mode": "json", "document": json.dumps({"name": "v-typed", "config": {**config, "count": "3",
                                                                               "database.password": "[hidden]"}}),
        "submit": "create"})
    assert again.status_code == 400 and "Type the values of database.password: [hidden] stands for a secret" in \
        again.content.decode()
    assert "v-typed" not in selectors.client_for(connect_row).connectors()

    # The edit page: a new secret with an error comes back hidden; [hidden] keeps the current one.
    _create_counting(operator_client, connect_row, "v-retyped", topic, password="old-s3cret-3")
    url = _base(connect_row) + "connectors/v-retyped/config"
    edited = {**config, "name": "v-retyped", "database.password": "new-s3cret-4"}
    refused = operator_client.post(url, {"document": json.dumps(edited), "submit": "save"}).content.decode()
    assert "new-s3cret-4" not in refused and "old-s3cret-3" not in refused
    assert "Secrets are not shown back (database.password): type them again, or leave [hidden] to keep the " \
           "current values." in refused
    operator_client.post(_base(connect_row) + "connectors/v-retyped/action", {"action": "delete", "confirmed": "yes"})
