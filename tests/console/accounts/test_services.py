import pytest
from django.contrib.auth.models import Group

from console.accounts.models import AuditLogEntry
from console.accounts.roles import ADMIN, OPERATOR, VIEWER, has_role, role_of
from console.accounts.services import audited, user_create
from console.errors import ConsoleError, InvalidInput


def test_roles_exist_after_migrate(db):
    assert set(Group.objects.values_list("name", flat=True)) >= {VIEWER, OPERATOR, ADMIN}


def test_role_order(users, django_user_model):
    assert [role_of(users[r]) for r in ("viewer", "operator", "admin")] == [VIEWER, OPERATOR, ADMIN]
    assert has_role(users["admin"], OPERATOR) and has_role(users["operator"], VIEWER)
    assert not has_role(users["viewer"], OPERATOR) and not has_role(users["operator"], ADMIN)
    root = django_user_model.objects.create_superuser("root", password="x")
    assert role_of(root) == ADMIN
    with pytest.raises(InvalidInput, match="Unknown role"):
        user_create(username="x", password="x", role="god")


def test_audited_records_success_and_failure(users, cluster):
    with audited(actor=users["operator"], cluster=cluster, action="thing.do", target="t1", details={"a": 1}) as d:
        d["b"] = 2
    with pytest.raises(ConsoleError):
        with audited(actor=users["operator"], cluster=cluster, action="thing.do", target="t2", details={}):
            raise ConsoleError("it broke")
    entries = list(AuditLogEntry.objects.order_by("id"))
    assert [(e.actor_name, e.cluster_name, e.target, e.result, e.details) for e in entries] == [
        ("operator", "shared engine", "t1", "ok", {"a": 1, "b": 2}),
        ("operator", "shared engine", "t2", "failed", {"error": "it broke"})]


def test_a_target_longer_than_its_column_is_cut_and_kept_whole_in_the_details(users, db):
    name = "q" * 513                       # a refused entity name: every database must take its audit entry
    with pytest.raises(ConsoleError):
        with audited(actor=users["admin"], cluster=None, action="quota.alter", target=name, details={}):
            raise ConsoleError("too long")
    entry = AuditLogEntry.objects.get()
    assert (len(entry.target), entry.target[-1], entry.details["target"]) == (300, "…", name)
