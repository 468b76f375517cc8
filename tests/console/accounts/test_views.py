import base64

from django.test import Client
from django.urls import reverse

from console.topics.services import topic_create


def test_audit_log_is_for_admins(cluster, users, viewer_client, operator_client, console_admin_client,
                                unique_topic):
    name = unique_topic()
    topic_create(cluster=cluster, actor=users["operator"], name=name, partitions=1, replication_factor=1)
    assert viewer_client.get(reverse("audit_log")).status_code == 403
    assert operator_client.get(reverse("audit_log")).status_code == 403
    assert "Audit log" not in operator_client.get(reverse("clusters:list")).content.decode()
    page = console_admin_client.get(reverse("audit_log")).content.decode()
    assert "topic.create" in page and name in page and "operator" in page
    data = console_admin_client.get("/api/audit").json()
    assert [(e["actor"], e["action"], e["target"], e["result"]) for e in data["entries"]] == [
        ("operator", "topic.create", name, "ok")]
    assert operator_client.get("/api/audit").status_code == 403


def test_api_answers_401_to_anonymous_callers_and_accepts_basic_auth(cluster, users):
    anonymous = Client().get("/api/clusters")
    assert anonymous.status_code == 401 and anonymous.json() == {"error": "Authentication required."}
    token = base64.b64encode(b"viewer:viewer-password").decode()
    assert Client().get("/api/clusters", HTTP_AUTHORIZATION=f"Basic {token}").status_code == 200
    bad = base64.b64encode(b"viewer:nope").decode()
    assert Client().get("/api/clusters", HTTP_AUTHORIZATION=f"Basic {bad}").status_code == 401
