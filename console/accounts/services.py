"""Writes for accounts: users with a role, and audit log entries."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from console.accounts.models import AuditLogEntry
from console.accounts.roles import ROLES
from console.errors import ConsoleError, InvalidInput


def user_create(*, username: str, password: str, role: str, email: str = ""):
    """A console user in exactly one role group."""
    if role not in ROLES:
        raise InvalidInput(f"Unknown role {role!r}: use one of {', '.join(ROLES)}.")
    User = get_user_model()
    try:   # Django's password validators (settings.AUTH_PASSWORD_VALIDATORS)
        validate_password(password, user=User(username=username, email=email))
    except ValidationError as exc:
        raise InvalidInput(" ".join(exc.messages)) from None
    user = User.objects.create_user(username=username, password=password, email=email)
    user.groups.add(Group.objects.get(name=role))
    return user


def audit_log_record(*, actor, cluster, action: str, target: str, result: str, details: dict) -> AuditLogEntry:
    # A target longer than its column (a refused 500-character name, say) is cut there, and
    # kept whole in the details: Postgres refuses an over-long value where SQLite stored it.
    limit = AuditLogEntry._meta.get_field("target").max_length
    if len(target) > limit:
        target, details = target[:limit - 1] + "…", {**details, "target": target}
    return AuditLogEntry.objects.create(
        actor=actor if getattr(actor, "pk", None) else None,
        actor_name=getattr(actor, "username", "") or "(system)",
        # A cluster row removed by the action itself keeps only its name in the entry.
        cluster=cluster if getattr(cluster, "pk", None) else None, cluster_name=getattr(cluster, "name", ""),
        action=action, target=target, result=result, details=details)


@contextmanager
def audited(*, actor, cluster, action: str, target: str, details: dict) -> Iterator[dict]:
    """Record the action in the audit log however it ends. The body may add to `details`;
    a ConsoleError is recorded with its message, then re-raised for the view to show."""
    try:
        yield details
    except ConsoleError as exc:
        error = {"error": str(exc), **({"kafka_code": exc.kafka_code} if exc.kafka_code else {})}
        audit_log_record(actor=actor, cluster=cluster, action=action, target=target, result=AuditLogEntry.FAILED,
                         details={**details, **error})
        raise
    audit_log_record(actor=actor, cluster=cluster, action=action, target=target, result=AuditLogEntry.OK,
                     details=details)
