from django.apps import AppConfig
from django.db.models.signals import post_migrate


def ensure_roles(sender, using="default", **kwargs):
    """The role groups exist after every migrate, and after every flush (which Django follows
    with post_migrate): a database emptied by a flush still has its three roles."""
    from django.contrib.auth.models import Group

    from console.accounts.roles import ROLES

    for name in ROLES:
        Group.objects.using(using).get_or_create(name=name)


class AccountsConfig(AppConfig):
    """Roles (Django groups viewer < operator < admin) and the audit log of admin actions."""

    name = "console.accounts"
    label = "accounts"

    def ready(self):
        post_migrate.connect(ensure_roles, sender=self, dispatch_uid="console.accounts.ensure_roles")
