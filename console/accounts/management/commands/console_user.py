"""`manage.py console_user NAME --role viewer|operator|admin [--password-env VAR]`"""
import getpass
import os

from django.core.management.base import BaseCommand, CommandError

from console.accounts.roles import ROLES
from console.accounts.services import user_create
from console.errors import ConsoleError


class Command(BaseCommand):
    help = "Create a console user in one role. The password comes from --password-env or a prompt."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=ROLES, required=True)
        parser.add_argument("--password-env", help="environment variable holding the password")

    def handle(self, *args, username, role, password_env, **options):
        if password_env:
            password = os.environ.get(password_env, "")
            if not password:
                raise CommandError(f"{password_env} is empty or not set")
        else:
            password = getpass.getpass(f"Password for {username}: ")
        try:
            user_create(username=username, password=password, role=role)
        except ConsoleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Created {username} ({role}).")
