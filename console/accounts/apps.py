from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Roles (Django groups viewer < operator < admin) and the audit log of admin actions."""

    name = "console.accounts"
    label = "accounts"
