"""An external Redis with a password (Debian's redis-server with requirepass) at REDIS_URL:
Celery's broker, Channels' layer and Django's cache of console processes all go through it.

Each console process here is a child with nothing but REDIS_URL to find Redis: one writes to
the cache, sends on the channel layer and queues a task; another reads the cache entry and
receives the message; a real Celery worker runs the task.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest
import redis

from tests.support.celery_worker import CeleryWorker
from tests.support.console_process import ROOT
from tests.support.redis_server import RedisServer
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(300)]

WRITER = """
import django; django.setup()
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.cache import cache
from console.celery import app
cache.set("proof", "written by another console process", 300)
async_to_sync(get_channel_layer().send)("proof-channel", {"type": "proof.message", "text": "over Redis"})
app.send_task("console.analytics.tasks.analytics_watchdog")
"""
READER = """
import json, django; django.setup()
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.cache import cache
message = async_to_sync(get_channel_layer().receive)("proof-channel")
print(json.dumps({"cache": cache.get("proof"), "message": message}))
"""


def console_process(code: str, env: dict) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_celery_channels_and_the_cache_all_use_the_password_protected_redis(tmp_path):
    password = secrets.token_urlsafe(24)
    server = RedisServer(tmp_path / "redis", password=password, executable="/usr/bin/redis-server").start()
    try:
        # The server refuses anyone without the password.
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=server.port, socket_timeout=5).ping()
        env = {**os.environ, "REDIS_URL": server.url, "DJANGO_SETTINGS_MODULE": "tests.settings"}
        worker = CeleryWorker(broker_url=server.url, log_path=tmp_path / "worker.log").start()
        try:
            console_process(WRITER, env)
            wait_until(lambda: "analytics_watchdog" in worker.log_text() and " succeeded in " in worker.log_text(),
                       timeout=60, message=f"the worker to run the task sent through Redis\n{worker.log_text()}")
        finally:
            worker.stop()
        seen = json.loads(console_process(READER, env).strip().splitlines()[-1])
        assert seen == {"cache": "written by another console process",
                        "message": {"type": "proof.message", "text": "over Redis"}}
        # The cache entry is in that Redis (Django's key: prefix, version, key), and no log shows the password.
        client = redis.Redis.from_url(server.url)
        assert client.exists("console:1:proof") == 1
        assert password not in worker.log_text()
    finally:
        server.stop()
