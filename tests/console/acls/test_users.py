"""The Users page: SCRAM users listed with their mechanisms, added, rotated and removed through
the protocol; the password reaches no page, audit entry or log line; admin role only."""
import uuid

import pytest
from django.urls import reverse
from kafka import KafkaAdminClient

from console.accounts.models import AuditLogEntry
from console.clusters.gateway import cluster_gateway
from tests.support.logs import capture_debug_logs

PASSWORD = "s3cret-Passw0rd-" + uuid.uuid4().hex[:6]


def scram_users(cluster) -> dict[str, set[tuple[str, int]]]:
    with cluster_gateway(cluster) as gw:
        return {u.name: {(c.mechanism, c.iterations) for c in u.credentials} for u in gw.scram_users.describe()}


def can_log_in(engine, user: str, password: str) -> bool:
    try:
        KafkaAdminClient(bootstrap_servers=engine.bootstrap, security_protocol="SASL_PLAINTEXT",
                         sasl_mechanism="SCRAM-SHA-512", sasl_plain_username=user, sasl_plain_password=password,
                         request_timeout_ms=10000, bootstrap_timeout_ms=5000).close()
        return True
    except Exception:   # noqa: BLE001 - any refusal means no
        return False


def test_add_rotate_and_remove_a_user_without_the_password_anywhere(acl_cluster, acl_engine, console_admin_client,
                                                                    caplog):
    """Every log record of the console's requests is kept (DEBUG, kafka-python's included); the
    test's own logins, whose client logs its config, are left out."""
    user = f"app-{uuid.uuid4().hex[:6]}"
    capture_debug_logs(caplog)
    logged = []

    def console(method, *args, **kwargs):
        caplog.clear()
        answer = method(*args, **kwargs)
        logged.append(caplog.text)
        return answer

    save = reverse("acls:user_save", args=[acl_cluster.pk])
    done = console(console_admin_client.post, save, {"user": user, "mechanisms": ["SCRAM-SHA-256", "SCRAM-SHA-512"],
                                                     "password": PASSWORD, "iterations": "4096"}, follow=True)
    assert done.status_code == 200 and PASSWORD not in done.content.decode()
    assert scram_users(acl_cluster)[user] == {("SCRAM-SHA-256", 4096), ("SCRAM-SHA-512", 4096)}
    assert can_log_in(acl_engine, user, PASSWORD)
    listed = console(console_admin_client.get, reverse("acls:users", args=[acl_cluster.pk])).content.decode()
    assert f'data-user="{user}"' in listed and PASSWORD not in listed

    rotated = PASSWORD + "-2"
    console(console_admin_client.post, save, {"user": user, "mechanisms": ["SCRAM-SHA-512"], "password": rotated,
                                              "iterations": "8192"})
    assert ("SCRAM-SHA-512", 8192) in scram_users(acl_cluster)[user]
    assert can_log_in(acl_engine, user, rotated) and not can_log_in(acl_engine, user, PASSWORD)

    remove = reverse("acls:user_remove", args=[acl_cluster.pk])
    asked = console(console_admin_client.post, remove, {"user": user, "mechanism": "both"})
    assert 'id="confirm-form"' in asked.content.decode()
    console(console_admin_client.post, remove, {"user": user, "mechanism": "both", "confirmed": "yes"})
    assert user not in scram_users(acl_cluster)

    entries = AuditLogEntry.objects.filter(target=user).order_by("id")
    assert [(e.action, e.result) for e in entries] == [("scram.upsert", "ok"), ("scram.upsert", "ok"),
                                                       ("scram.remove", "ok")]
    assert entries[0].details == {"mechanisms": ["SCRAM-SHA-256", "SCRAM-SHA-512"], "iterations": 4096}
    everything = str([(e.details, e.target) for e in AuditLogEntry.objects.all()]) + "".join(logged)
    assert "AlterUserScramCredentials" in everything          # the requests were logged, at DEBUG
    assert PASSWORD not in everything and rotated not in everything


def test_a_refused_form_comes_back_without_the_password(acl_cluster, console_admin_client):
    page = console_admin_client.post(reverse("acls:user_save", args=[acl_cluster.pk]),
                                     {"user": " bad,name", "mechanisms": ["SCRAM-SHA-256"], "password": PASSWORD,
                                      "iterations": "100"})
    html = page.content.decode()
    assert page.status_code == 400 and "leading or trailing spaces" in html and "4096" in html
    assert PASSWORD not in html


@pytest.mark.parametrize("role_client", ["viewer_client", "operator_client"])
def test_only_admins_change_users(acl_cluster, role_client, request):
    client = request.getfixturevalue(role_client)
    page = client.get(reverse("acls:users", args=[acl_cluster.pk]))
    assert page.status_code == 200 and 'id="user-form"' not in page.content.decode()
    refused = client.post(reverse("acls:user_save", args=[acl_cluster.pk]),
                          {"user": "x", "mechanisms": ["SCRAM-SHA-256"], "password": PASSWORD, "iterations": "4096"})
    assert refused.status_code == 403
