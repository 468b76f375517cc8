"""The Quotas page, its set and remove actions and the JSON API, through Django's test client
against the shared engine."""
import html as html_text
import re

import pytest
from django.test import Client
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from tests.console.quotas.conftest import quotas_on, set_quota

pytestmark = pytest.mark.usefixtures("no_quotas_left")
RATE = "controller_mutation_rate"
ADMIN_MARKER = "data-admin-action"


def rows(page) -> list[tuple[str, str]]:
    """(entity label, key) of each quota row of the list page."""
    return [(html_text.unescape(part.split('"')[0]), part.split('data-key="')[1].split('"')[0])
            for part in page.content.decode().split('<tr data-entity="')[1:]]


def applied_fields(preview) -> dict:
    """The hidden fields of the preview's "Set this quota" form: what the button posts."""
    form = preview.content.decode().split('<form method="post" id="apply-quota">')[1].split("</form>")[0]
    return dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', form))


def unescaped(page) -> str:
    return html_text.unescape(page.content.decode())


def test_the_list_shows_quotas_set_through_the_protocol_with_units_defaults_filters_and_search(cluster,
                                                                                                viewer_client):
    set_quota(cluster, (("user", "alice"),), RATE, 12.5)
    set_quota(cluster, (("client-id", None),), RATE, 3)
    set_quota(cluster, (("client-id", "ingest"), ("user", "alice")), RATE, 40)
    set_quota(cluster, (("ip", "10.0.0.1"),), "connection_creation_rate", 30)
    url = reverse("quotas:list", args=[cluster.pk])
    page = viewer_client.get(url)
    assert page.status_code == 200
    assert rows(page) == [("user 'alice'", RATE), ("user 'alice', client-id 'ingest'", RATE),
                          ("default client-id", RATE), ("ip '10.0.0.1'", "connection_creation_rate")]
    html = page.content.decode()
    assert "12.5 mutations/s" in html and "40 mutations/s" in html and "3 mutations/s" in html
    assert '<em class="default-entity">default</em>' in html
    assert rows(viewer_client.get(url, {"type": "client-id"})) == [("user 'alice', client-id 'ingest'", RATE),
                                                                   ("default client-id", RATE)]
    assert rows(viewer_client.get(url, {"q": "INGE"})) == [("user 'alice', client-id 'ingest'", RATE)]
    assert rows(viewer_client.get(url, {"q": "default"})) == [("default client-id", RATE)]
    assert rows(viewer_client.get(url, {"type": "ip"})) == [("ip '10.0.0.1'", "connection_creation_rate")]


def test_navigation_links_to_the_page(cluster, viewer_client):
    page = viewer_client.get(reverse("clusters:overview", args=[cluster.pk]))
    assert f'href="{reverse("quotas:list", args=[cluster.pk])}">Quotas</a>' in page.content.decode()


def set_url(cluster) -> str:
    return reverse("quotas:set", args=[cluster.pk])


def test_operator_previews_then_sets_quotas_for_a_user_a_client_id_and_the_default_user(cluster, operator_client):
    form = operator_client.get(set_url(cluster))
    assert form.status_code == 200 and 'id="quota-preview"' not in form.content.decode()
    preview = operator_client.get(set_url(cluster), {"user": "alice", "key": RATE, "value": "12.5"})
    html = unescaped(preview)
    assert preview.status_code == 200 and 'id="quota-preview"' in html and "csrfmiddlewaretoken" in html
    assert "<del>not set</del> → <ins>12.5 mutations/s</ins>" in html
    assert quotas_on(cluster) == {}                                         # validate_only changed nothing
    assert not AuditLogEntry.objects.exists()

    for fields, value in (({"user": "alice"}, "12.5"), ({"client_id": "ingest"}, "4"),
                          ({"user_default": "on"}, "1000000")):
        shown = operator_client.get(set_url(cluster), {**fields, "key": RATE, "value": value})
        posted = applied_fields(shown)
        assert {k: v for k, v in posted.items() if k != "csrfmiddlewaretoken"} == {
            **{k: "True" if v == "on" else v for k, v in fields.items()}, "key": RATE, "value": value}
        done = operator_client.post(set_url(cluster), posted)
        assert done.status_code == 302 and done["Location"] == reverse("quotas:list", args=[cluster.pk])
    assert quotas_on(cluster) == {(("user", "alice"),): {RATE: 12.5}, (("client-id", "ingest"),): {RATE: 4.0},
                                  (("user", None),): {RATE: 1000000.0}}
    listing = operator_client.get(reverse("quotas:list", args=[cluster.pk]))
    assert "set to 1,000,000 mutations/s." in unescaped(listing)
    assert rows(listing) == [("default user", RATE), ("user 'alice'", RATE), ("client-id 'ingest'", RATE)]

    changed = operator_client.get(set_url(cluster), {"user": "alice", "key": RATE, "value": "20"})
    assert "<del>12.5 mutations/s</del> → <ins>20 mutations/s</ins>" in changed.content.decode()
    # The list's "Change…" link fills the form in without previewing an empty value.
    prefilled = operator_client.get(set_url(cluster), {"user_default": "on", "key": RATE})
    assert prefilled.status_code == 200 and 'name="user_default" value="on" id="id_user_default" checked' in \
        prefilled.content.decode()

    remove = reverse("quotas:remove", args=[cluster.pk])
    asked = operator_client.post(remove, {"client_id": "ingest", "key": RATE})
    assert asked.status_code == 200 and 'id="confirm-form"' in asked.content.decode()
    assert (("client-id", "ingest"),) in quotas_on(cluster)                  # not without confirming
    removed = operator_client.post(remove, {"client_id": "ingest", "key": RATE, "confirmed": "yes"}, follow=True)
    assert "controller_mutation_rate of client-id 'ingest' removed (it was 4 mutations/s)." in unescaped(removed)
    assert (("client-id", "ingest"),) not in quotas_on(cluster)
    assert list(AuditLogEntry.objects.order_by("id").values_list("action", "result")) == [
        ("quota.set", "ok")] * 3 + [("quota.remove", "ok")]


def test_a_key_the_engine_refuses_reads_as_a_sentence_with_kafkas_code_and_nothing_is_stored(cluster,
                                                                                           operator_client):
    data = {"ip": "10.0.0.1", "key": "connection_creation_rate", "value": "3000000000"}
    preview = operator_client.get(set_url(cluster), data)
    for answer in (preview, operator_client.post(set_url(cluster), data)):
        html = answer.content.decode()
        assert answer.status_code == 400 and 'id="apply-quota"' not in html
        assert html.count('<p class="error">') == 1
        error = html.split('<p class="error">')[1].split("</p>")[0]
        assert "an integer" in error and error.endswith(".") and "[Error" not in error
        assert error.startswith("The cluster refused it with INVALID_REQUEST (42): ") and "malformed" not in error
        assert 'value="10.0.0.1"' in html                                    # the form stays filled in
    assert quotas_on(cluster) == {}
    entry = AuditLogEntry.objects.get()
    assert (entry.action, entry.result, entry.details["kafka_code"]) == ("quota.set", "failed", "INVALID_REQUEST (42)")
    assert entry.details["error"] == html_text.unescape(error)              # the audit log has the page's sentence


@pytest.mark.parametrize("data, field, message", [
    ({"user": "alice", "key": "bytes_per_week", "value": "1"}, "key", "Select a valid choice"),
    ({"user": "alice", "key": RATE, "value": "-2"}, "value", "greater than 0"),
    ({"user": "alice", "key": RATE, "value": "0"}, "value", "greater than 0"),
    ({"user": "alice", "key": RATE, "value": "fast"}, "value", "“fast” is not a number."),
    ({"user": "alice", "key": RATE, "value": "inf"}, "value", "“inf” is not a number."),
    ({"user": "alice", "key": "producer_byte_rate", "value": "1.5"}, "value", "whole number"),
    ({"user": "a" * 513, "key": RATE, "value": "1"}, "user", "at most 512 characters"),
    ({"user": "alice", "ip": "10.0.0.1", "key": RATE, "value": "1"}, None, "cannot be combined"),
    ({"user": "alice", "user_default": "on", "key": RATE, "value": "1"}, "user", "not both"),
    ({"key": RATE, "value": "1"}, None, "Name at least one entity"),
    ({"ip": "10.0.0.300", "key": "connection_creation_rate", "value": "1"}, None, "not an IPv4 or IPv6"),
    ({"client_id": "app", "key": "connection_creation_rate", "value": "1"}, "key", "not a quota of users"),
])
def test_bad_input_gets_a_readable_form_error_and_asks_nothing(cluster, operator_client, data, field, message):
    for answer in (operator_client.get(set_url(cluster), data), operator_client.post(set_url(cluster), data)):
        assert answer.status_code == 400
        errors = answer.context["form"].errors
        shown = errors.get(field or "__all__", [])
        assert any(message in e for e in shown), errors
    assert quotas_on(cluster) == {} and not AuditLogEntry.objects.exists()


def test_a_bad_removal_is_a_message_and_changes_nothing(cluster, operator_client):
    set_quota(cluster, (("user", "alice"),), RATE, 2)
    remove = reverse("quotas:remove", args=[cluster.pk])
    junk = operator_client.post(remove, {"user": "alice", "key": "nope", "confirmed": "yes"}, follow=True)
    assert "No quota removed: Select a valid choice." in junk.content.decode()
    missing = operator_client.post(remove, {"user": "bob", "key": RATE, "confirmed": "yes"}, follow=True)
    assert "user 'bob' has no controller_mutation_rate quota to remove." in unescaped(missing)
    assert quotas_on(cluster) == {(("user", "alice"),): {RATE: 2.0}}
    assert list(AuditLogEntry.objects.values_list("action", "result")) == [("quota.remove", "failed")]


def admin_requests(cluster):
    set_data = {"user": "mallory", "key": RATE, "value": "1"}
    remove_data = {"user": "alice", "key": RATE, "confirmed": "yes"}
    return [("post", set_url(cluster), set_data), ("get", set_url(cluster), set_data),
            ("post", reverse("quotas:remove", args=[cluster.pk]), remove_data),
            ("get", reverse("api:quota_preview", args=[cluster.pk]), set_data),
            ("post", reverse("api:quota_set", args=[cluster.pk]), set_data),
            ("post", reverse("api:quota_remove", args=[cluster.pk]), remove_data)]


def test_viewer_sees_no_admin_buttons_and_is_refused_every_action(cluster, viewer_client, operator_client):
    set_quota(cluster, (("user", "alice"),), RATE, 2)
    url = reverse("quotas:list", args=[cluster.pk])
    assert ADMIN_MARKER not in viewer_client.get(url).content.decode()
    seen_by_operator = operator_client.get(url).content.decode()
    for action in ("set-quota", "change-quota", "remove-quota"):
        assert f'{ADMIN_MARKER}="{action}"' in seen_by_operator
    for method, target, data in admin_requests(cluster):
        assert getattr(viewer_client, method)(target, data).status_code == 403, (method, target)
    assert quotas_on(cluster) == {(("user", "alice"),): {RATE: 2.0}}
    assert not AuditLogEntry.objects.exists()


def test_posts_need_the_csrf_token(cluster, users):
    set_quota(cluster, (("user", "alice"),), RATE, 2)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(users["operator"])
    for method, target, data in admin_requests(cluster):
        if method == "post":
            assert strict.post(target, data).status_code == 403, target
    assert quotas_on(cluster) == {(("user", "alice"),): {RATE: 2.0}}
    assert not AuditLogEntry.objects.exists()


def test_json_api_lists_entities_as_kafka_names_them(cluster, viewer_client, users):
    set_quota(cluster, (("user", None),), RATE, 1000000)
    set_quota(cluster, (("client-id", "ingest"),), RATE, 4)
    url = reverse("api:quotas", args=[cluster.pk])
    answer = viewer_client.get(url)
    assert answer.status_code == 200
    body = answer.json()
    assert body["supported"] is True and body["error"] is None
    assert body["rows"] == [
        {"label": "default user", "entity": [{"entity_type": "user", "name": None}],
         "values": [{"key": RATE, "value": 1000000.0, "display": "1,000,000 mutations/s"}]},
        {"label": "client-id 'ingest'", "entity": [{"entity_type": "client-id", "name": "ingest"}],
         "values": [{"key": RATE, "value": 4.0, "display": "4 mutations/s"}]}]
    assert [r["label"] for r in viewer_client.get(url, {"type": "client-id"}).json()["rows"]] == ["client-id 'ingest'"]
    ips = viewer_client.get(url, {"type": "ip"})
    assert ips.status_code == 200 and ips.json()["rows"] == []
    assert Client().get(url).status_code == 401


def test_json_api_previews_sets_and_removes(cluster, operator_client):
    api = {name: reverse(f"api:quota_{name}", args=[cluster.pk]) for name in ("preview", "set", "remove")}
    default_user = {"user_default": "true", "key": RATE}
    preview = operator_client.get(api["preview"], {**default_user, "value": "500000"})
    assert preview.status_code == 200 and preview.json() == {
        "label": "default user", "key": RATE, "old": None, "new": 500000.0, "old_display": None,
        "new_display": "500,000 mutations/s"}
    assert quotas_on(cluster) == {}
    assert operator_client.get(api["set"]).status_code == 405
    done = operator_client.post(api["set"], {**default_user, "value": "500000"})
    assert done.status_code == 200 and done.json() == {"entity": "default user", "key": RATE, "value": 500000.0,
                                                        "old": None}
    assert quotas_on(cluster) == {(("user", None),): {RATE: 500000.0}}
    refused = operator_client.post(api["set"], {"ip": "10.0.0.1", "key": "connection_creation_rate", "value": "3000000000"})
    assert refused.status_code == 503 and "an integer" in refused.json()["error"]
    bad = operator_client.post(api["set"], {"user": "alice", "ip": "10.0.0.1", "key": RATE, "value": "1"})
    assert bad.status_code == 400 and "cannot be combined" in bad.json()["error"]
    removed = operator_client.post(api["remove"], default_user)
    assert removed.status_code == 200 and removed.json()["removed"] == 500000.0
    assert quotas_on(cluster) == {}
    assert list(AuditLogEntry.objects.order_by("id").values_list("action", "result")) == [
        ("quota.set", "ok"), ("quota.set", "failed"), ("quota.remove", "ok")]


def test_the_page_tells_which_entity_a_clients_quota_comes_from(cluster, viewer_client):
    set_quota(cluster, (("client-id", "ingest"), ("user", "alice")), RATE, 40)
    set_quota(cluster, (("user", None),), RATE, 7)
    url = reverse("quotas:list", args=[cluster.pk])
    page = unescaped(viewer_client.get(url, {"who": "1", "who_user": "alice", "who_client_id": "ingest"}))
    row = page.split(f'<tr data-key="{RATE}"><td>{RATE}</td>')[-1].split("</tr>")[0]
    assert "user 'alice', client-id 'ingest'" in row and "40 mutations/s" in row
    page = unescaped(viewer_client.get(url, {"who": "1", "who_user": "bob", "who_client_id": "ingest"}))
    row = page.split(f'<tr data-key="{RATE}"><td>{RATE}</td>')[-1].split("</tr>")[0]
    assert "default user" in row and "7 mutations/s" in row
    assert "no entity: no quota" in page            # the byte rates: nothing set
    refused = unescaped(viewer_client.get(url, {"who": "1", "who_user": "a\nb", "who_client_id": "x" * 600}))
    assert "cannot hold control characters" in refused and "A client id is at most 512 characters" in refused
    assert 'id="quota-resolution"' not in refused


def test_a_rows_change_and_remove_are_one_group_of_buttons(cluster, operator_client):
    """Change… and Remove… of a quota sit in one action group, both buttons (Remove in the danger
    colour), not a button beside a bare link."""
    set_quota(cluster, (("user", "alice"),), RATE, 2)
    page = operator_client.get(reverse("quotas:list", args=[cluster.pk])).content.decode()
    group = page[page.index('<div class="action-group">'):]
    group = group[:group.index("</div>")]
    assert 'class="button" data-admin-action="change-quota"' in group
    assert 'class="danger" data-admin-action="remove-quota">Remove…</button>' in group
    assert "link" not in group.split('data-admin-action="remove-quota"')[0].rsplit("<button", 1)[1]
