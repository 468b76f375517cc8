#!/usr/bin/env python
"""Django's command-line utility for the console."""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A setting is missing or wrong (SECRET_KEY, TOPICS_PER_PAGE=0, ...): say which, without a traceback.
        sys.exit(f"Configuration error: {exc}")


if __name__ == "__main__":
    main()
