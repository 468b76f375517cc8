from console.accounts.roles import ADMIN, OPERATOR, has_role, role_of


def role(request) -> dict:
    """Templates show admin buttons only to operators and the audit link only to admins."""
    user = getattr(request, "user", None)
    return {"console_role": role_of(user), "can_operate": has_role(user, OPERATOR),
            "is_console_admin": has_role(user, ADMIN)}
