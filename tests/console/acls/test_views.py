"""The ACLs page and its actions through Django's test client against the ACL engine: list,
filters and sort; add, wizard and CSV import through a preview and a confirmation; delete;
export; a principal's permissions; role checks and the audit log."""
import html as html_text
import re

import pytest
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.clusters.gateway import cluster_gateway
from kafka_rules.acls import AclFilter
from tests.support.acls import grant

ADMIN_MARKER = "data-admin-action"


def rows(page) -> list[str]:
    return [html_text.unescape(r) for r in re.findall(r'<tr data-acl="([^"]*)"', page.content.decode())]


def acls_of(cluster, principal: str) -> set[str]:
    from console.acls.rules import describe
    with cluster_gateway(cluster) as gw:
        return {describe(b) for b in gw.acls.describe(AclFilter(principal=principal))}


def test_the_list_filters_sorts_and_pages(acl_cluster, acl_admin, principal, viewer_client):
    grant(acl_admin, principal, "READ", "TOPIC", "orders")
    grant(acl_admin, principal, "WRITE", "TOPIC", "ord", pattern="PREFIXED")
    grant(acl_admin, principal, "READ", "GROUP", "billing", permission="DENY")
    url = reverse("acls:list", args=[acl_cluster.pk])
    page = viewer_client.get(url, {"principal": principal.upper()})
    assert page.status_code == 200
    assert rows(page) == [f"{principal} READ GROUP billing", f"{principal} WRITE TOPIC ord",
                          f"{principal} READ TOPIC orders"]
    by_name = viewer_client.get(url, {"principal": principal, "sort": "resource_name", "desc": "1"})
    assert [r.split()[-1] for r in rows(by_name)] == ["orders", "ord", "billing"]
    assert rows(viewer_client.get(url, {"principal": principal, "permission_type": "2"})) == \
        [f"{principal} READ GROUP billing"]
    assert rows(viewer_client.get(url, {"principal": principal, "resource_type": "2", "pattern_type": "4"})) == \
        [f"{principal} WRITE TOPIC ord"]
    assert ADMIN_MARKER not in page.content.decode()            # a viewer gets no buttons that change


def test_navigation_links_to_the_acls_and_users_pages(acl_cluster, viewer_client):
    html = viewer_client.get(reverse("clusters:overview", args=[acl_cluster.pk])).content.decode()
    assert f'href="{reverse("acls:list", args=[acl_cluster.pk])}">ACLs</a>' in html
    assert f'href="{reverse("acls:users", args=[acl_cluster.pk])}">Users</a>' in html


def test_add_previews_then_creates_and_is_audited(acl_cluster, principal, console_admin_client):
    url = reverse("acls:add", args=[acl_cluster.pk])
    preview = console_admin_client.post(url, {"principal": principal, "host": "*", "resource_type": "2",
                                              "resource_name": "payments", "pattern_type": "3", "operation": "4",
                                              "permission_type": "3"})
    html = html_text.unescape(preview.content.decode())
    assert preview.status_code == 200 and 'id="acl-preview"' in html and "1 ACL will be created" in html
    assert acls_of(acl_cluster, principal) == set()                     # the preview changed nothing
    csv_text = re.search(r'name="acls_csv" value="([^"]*)"', preview.content.decode()).group(1)
    done = console_admin_client.post(reverse("acls:create", args=[acl_cluster.pk]),
                                     {"acls_csv": html_text.unescape(csv_text), "source": "form"})
    assert done.status_code == 302
    assert acls_of(acl_cluster, principal) == {f"ALLOW {principal} WRITE on TOPIC payments (LITERAL) from *"}
    entry = AuditLogEntry.objects.get(action="acl.create")
    assert entry.result == "ok" and entry.details["count"] == 1 and entry.details["source"] == "form"


def test_bad_bindings_are_form_errors(acl_cluster, principal, console_admin_client):
    url = reverse("acls:add", args=[acl_cluster.pk])
    fields = {"principal": principal, "host": "*", "resource_type": "3", "resource_name": "g", "pattern_type": "3",
              "operation": "4", "permission_type": "3"}
    refused = console_admin_client.post(url, fields)                     # WRITE on a group
    assert refused.status_code == 400 and "A GROUP ACL cannot grant WRITE" in refused.content.decode()
    assert console_admin_client.post(url, {**fields, "principal": "alice"}).status_code == 400
    cluster_named = console_admin_client.post(url, {**fields, "resource_type": "4", "operation": "7"})
    assert "The only valid name for the CLUSTER resource is kafka-cluster" in cluster_named.content.decode()


@pytest.mark.parametrize("kind, fields, expected", [
    ("consumer", {"topic": "in-", "topic_pattern": "4", "group": "readers", "group_pattern": "3"},
     {"READ on TOPIC in- (PREFIXED)", "DESCRIBE on TOPIC in- (PREFIXED)", "READ on GROUP readers (LITERAL)"}),
    ("producer", {"topic": "out", "topic_pattern": "3", "transactional_id": "tx", "transactional_pattern": "3",
                  "idempotent": "on"},
     {"WRITE on TOPIC out (LITERAL)", "DESCRIBE on TOPIC out (LITERAL)", "CREATE on TOPIC out (LITERAL)",
      "WRITE on TRANSACTIONAL_ID tx (LITERAL)", "DESCRIBE on TRANSACTIONAL_ID tx (LITERAL)",
      "IDEMPOTENT_WRITE on CLUSTER kafka-cluster (LITERAL)"}),
    ("streams", {"application_id": "wordcount", "input_topics": "text", "output_topics": "counts",
                 "exactly_once": "on"},
     {"READ on TOPIC text (LITERAL)", "DESCRIBE on TOPIC text (LITERAL)", "WRITE on TOPIC counts (LITERAL)",
      "DESCRIBE on TOPIC counts (LITERAL)", "ALL on TOPIC wordcount- (PREFIXED)", "READ on GROUP wordcount (LITERAL)",
      "WRITE on TRANSACTIONAL_ID wordcount- (PREFIXED)", "DESCRIBE on TRANSACTIONAL_ID wordcount- (PREFIXED)",
      "IDEMPOTENT_WRITE on CLUSTER kafka-cluster (LITERAL)"}),
])
def test_wizards_build_what_each_client_needs(acl_cluster, principal, console_admin_client, kind, fields, expected):
    preview = console_admin_client.post(reverse("acls:wizard", args=[acl_cluster.pk]),
                                        {"kind": kind, "principal": principal, "host": "*", **fields})
    assert preview.status_code == 200, preview.content.decode()[-2000:]
    csv_text = html_text.unescape(re.search(r'name="acls_csv" value="([^"]*)"', preview.content.decode()).group(1))
    console_admin_client.post(reverse("acls:create", args=[acl_cluster.pk]), {"acls_csv": csv_text,
                                                                              "source": "wizard"})
    assert acls_of(acl_cluster, principal) == {f"ALLOW {principal} {e} from *" for e in expected}


def test_csv_import_previews_new_existing_and_bad_rows(acl_cluster, acl_admin, principal, console_admin_client):
    grant(acl_admin, principal, "READ", "TOPIC", "already")
    text = ("Principal,ResourceType,PatternType,ResourceName,Operation,PermissionType,Host\n"
            f"{principal},TOPIC,LITERAL,already,READ,ALLOW,*\n"
            f"{principal},topic,prefixed,logs-,describe,allow,*\n"
            f"{principal},TOPIC,LITERAL,x,FLY,ALLOW,*\n"
            f"{principal},GROUP,LITERAL,g\n")
    preview = console_admin_client.post(reverse("acls:import", args=[acl_cluster.pk]), {"acls_csv": text})
    html = html_text.unescape(preview.content.decode())
    assert "1 ACL will be created" in html and "1 already on the cluster" in html
    assert "line 4: unknown value 'FLY'" in html and "line 5: Expected 7 columns" in html
    csv_text = html_text.unescape(re.search(r'name="acls_csv" value="([^"]*)"', preview.content.decode()).group(1))
    console_admin_client.post(reverse("acls:create", args=[acl_cluster.pk]), {"acls_csv": csv_text,
                                                                              "source": "import"})
    assert acls_of(acl_cluster, principal) == {f"ALLOW {principal} READ on TOPIC already (LITERAL) from *",
                                               f"ALLOW {principal} DESCRIBE on TOPIC logs- (PREFIXED) from *"}


def test_export_is_the_import_format(acl_cluster, acl_admin, principal, viewer_client):
    grant(acl_admin, principal, "WRITE", "TOPIC", "=SUM(A1)")                # a formula is made harmless
    exported = viewer_client.get(reverse("acls:export", args=[acl_cluster.pk]), {"principal": principal})
    assert exported["Content-Type"].startswith("text/csv")
    assert exported.content.decode().splitlines() == [
        "Principal,ResourceType,PatternType,ResourceName,Operation,PermissionType,Host",
        f"{principal},TOPIC,LITERAL,'=SUM(A1),WRITE,ALLOW,*"]


def test_delete_asks_then_deletes(acl_cluster, acl_admin, principal, console_admin_client):
    grant(acl_admin, principal, "READ", "TOPIC", "gone")
    line = f"{principal},TOPIC,LITERAL,gone,READ,ALLOW,*\n"
    url = reverse("acls:delete", args=[acl_cluster.pk])
    asked = console_admin_client.post(url, {"acls_csv": line})
    assert asked.status_code == 200 and 'id="confirm-form"' in asked.content.decode()
    assert len(acls_of(acl_cluster, principal)) == 1
    assert console_admin_client.post(url, {"acls_csv": line, "confirmed": "yes"}).status_code == 302
    assert acls_of(acl_cluster, principal) == set()
    assert AuditLogEntry.objects.get(action="acl.delete").details["removed"] == 1


def test_changes_need_the_admin_role_and_csrf(acl_cluster, operator_client):
    for name in ("add", "wizard", "import"):
        assert operator_client.get(reverse(f"acls:{name}", args=[acl_cluster.pk])).status_code == 403
    assert operator_client.post(reverse("acls:create", args=[acl_cluster.pk]), {"acls_csv": "x"}).status_code == 403
    from django.test import Client
    from console.accounts.services import user_create
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user_create(username="csrf-admin", password="csrf-admin-password-1", role="admin"))
    assert strict.post(reverse("acls:create", args=[acl_cluster.pk]), {"acls_csv": "x"}).status_code == 403


def test_a_principals_permissions_follow_kafkas_rules(acl_cluster, acl_admin, principal, viewer_client):
    grant(acl_admin, principal, "WRITE", "TOPIC", "pv-", pattern="PREFIXED")
    grant(acl_admin, principal, "WRITE", "TOPIC", "pv-secret", permission="DENY")
    acl_admin.create_topics([__import__("kafka.admin", fromlist=["NewTopic"]).NewTopic(t, 1, 1)
                             for t in ("pv-open", "pv-secret")])
    page = viewer_client.get(reverse("acls:principal", args=[acl_cluster.pk]), {"principal": principal, "host": "*"})
    html = page.content.decode()
    assert page.status_code == 200 and "super.users" in html
    allowed = dict(re.findall(r'data-resource="TOPIC:(pv-[a-z]+)">.*?data-allowed="([^"]*)"', html, re.S))
    assert allowed == {"pv-open": "WRITE,DESCRIBE", "pv-secret": "DESCRIBE"}
