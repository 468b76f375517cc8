"""The console's three roles, as Django groups: viewer < operator < admin.

Viewers read every page; operators also run admin actions (topics, elections, brokers);
admins also read the audit log. A superuser counts as admin. A user in no role group sees
nothing but a 403 page.
"""
from __future__ import annotations

VIEWER, OPERATOR, ADMIN = "viewer", "operator", "admin"
ROLES = (VIEWER, OPERATOR, ADMIN)   # ascending


def role_of(user) -> str | None:
    if not getattr(user, "is_authenticated", False):
        return None
    if user.is_superuser:
        return ADMIN
    cached = getattr(user, "_console_role", False)
    if cached is not False:
        return cached
    names = set(user.groups.values_list("name", flat=True))
    role = next((r for r in reversed(ROLES) if r in names), None)
    user._console_role = role   # one query per request, not one per check
    return role


def has_role(user, minimum: str) -> bool:
    role = role_of(user)
    return role is not None and ROLES.index(role) >= ROLES.index(minimum)
