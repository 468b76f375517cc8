"""The Transactions page and its abort action through Django's test client, against the shared
engine: roles, validation, and what the page says of a cluster. Real transactions are in
test_transactions.py."""
import pytest
from django.urls import reverse

from console.accounts.models import AuditLogEntry

ABORT = {"topic": "t", "partition": "0", "start_offset": "0"}


def abort_requests(cluster):
    pk = cluster.pk
    return [("get", reverse("transactions:abort", args=[pk]), ABORT),
            ("post", reverse("transactions:abort", args=[pk]), ABORT),
            ("post", reverse("api:transaction_abort", args=[pk]), ABORT)]


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_abort_needs_the_admin_role(cluster, users, client, role):
    client.force_login(users[role])
    for method, url, data in abort_requests(cluster):
        answer = getattr(client, method)(url, data)
        assert answer.status_code == 403, (method, url)
    assert not AuditLogEntry.objects.filter(action="transaction.abort").exists()


def test_abort_needs_a_login(cluster, client):
    for method, url, data in abort_requests(cluster):
        answer = getattr(client, method)(url, data)
        assert answer.status_code in (302, 401), (method, url)
        assert answer.status_code == 401 or "/login/" in answer["Location"]


def test_abort_post_is_csrf_checked(cluster, users):
    from django.test import Client
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["admin"])
    for method, url, data in abort_requests(cluster)[1:]:
        assert client.post(url, data).status_code == 403
    assert not AuditLogEntry.objects.filter(action="transaction.abort").exists()


@pytest.mark.parametrize("field, value", [("topic", "bad name!"), ("topic", "x" * 250), ("partition", "-1"),
                                          ("partition", "two"), ("start_offset", "-5"),
                                          ("start_offset", str(2**63))])
def test_abort_refuses_bad_input(cluster, console_admin_client, field, value):
    data = {**ABORT, field: value}
    page = console_admin_client.post(reverse("transactions:abort", args=[cluster.pk]), data)
    assert page.status_code == 400 and field in page.context["form"].errors
    api = console_admin_client.post(reverse("api:transaction_abort", args=[cluster.pk]), data)
    assert api.status_code == 400 and field in api.json()["error"]
    assert not AuditLogEntry.objects.filter(action="transaction.abort").exists()


def test_navigation_links_to_the_page(cluster, viewer_client):
    page = viewer_client.get(reverse("clusters:overview", args=[cluster.pk]))
    assert reverse("transactions:list", args=[cluster.pk]) in page.content.decode()
