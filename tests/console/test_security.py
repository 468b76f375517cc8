"""What an attacker tried: framing, inline scripts, guessing passwords, a missing SECRET_KEY,
and opening the console's websockets from another origin on the same host."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.urls import reverse

from console.localenv import ensure_secret_key, read_local_env
from console.origin import same_origin

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_forbids_framing_and_allows_only_its_own_assets(db, viewer_client):
    for response in (Client().get(reverse("login")), viewer_client.get(reverse("clusters:list"))):
        assert response["X-Frame-Options"] == "DENY"
        csp = response["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp
        for directive in ("default-src", "script-src", "style-src", "connect-src"):
            assert re.search(rf"{directive} 'self'(;|$)", csp), directive
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp


def test_no_template_has_an_inline_script_or_event_handler():
    offenders = []
    for template in [*(ROOT / "templates").rglob("*.html"), *(ROOT / "console").glob("*/templates/**/*.html")]:
        text = template.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            if "src=" not in tag and 'type="application/json"' not in tag:
                offenders.append(f"{template.name}: {tag}")
        offenders += [f"{template.name}: {m}" for m in re.findall(r"\son[a-z]+=\"", text)]
        offenders += [f"{template.name}: style attribute" for _ in re.findall(r"\sstyle=\"", text)]
    assert offenders == []


def test_failed_logins_lock_the_username_and_then_the_address(db, users, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="10.1.1.1")
    for _ in range(2):
        assert client.post(reverse("login"), {"username": "viewer", "password": "guess"}).status_code == 200
    assert client.post(reverse("login"), {"username": "viewer", "password": "guess"}).status_code == 429
    locked = client.post(reverse("login"), {"username": "viewer", "password": "viewer-password"})
    assert locked.status_code == 429 and 'id="locked-out"' in locked.content.decode()
    # Another address may still log in as someone else, and the locked address may not at all.
    other = Client(REMOTE_ADDR="10.2.2.2")
    assert other.post(reverse("login"), {"username": "operator", "password": "operator-password"}).status_code == 302
    assert client.post(reverse("login"), {"username": "operator", "password": "operator-password"}).status_code == 429
    # Guessing many usernames from one address locks the address too.
    spray = Client(REMOTE_ADDR="10.3.3.3")
    for name in ("a1", "a2", "a3"):
        spray.post(reverse("login"), {"username": name, "password": "guess"})
    assert spray.post(reverse("login"), {"username": "admin", "password": "admin-password"}).status_code == 429


def _settings_import(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from django.conf import settings; print(settings.SECRET_KEY[:4])"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_without_debug_a_missing_secret_key_stops_start_up_readably(tmp_path, monkeypatch):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env.update(DJANGO_SETTINGS_MODULE="console.settings", LOCAL_ENV_FILE=str(tmp_path / "local.env"))
    refused = _settings_import(env)
    assert refused.returncode != 0
    assert "SECRET_KEY is not set" in refused.stderr and str(tmp_path / "local.env") in refused.stderr
    assert _settings_import({**env, "DEBUG": "1"}).returncode == 0

    # `make run` runs `python -m console.localenv` first: it writes a key once, and settings read it.
    monkeypatch.delenv("SECRET_KEY")
    assert ensure_secret_key(tmp_path / "local.env") is True
    key = read_local_env(tmp_path / "local.env")["SECRET_KEY"]
    assert len(key) >= 50 and (tmp_path / "local.env").stat().st_mode & 0o777 == 0o600
    assert ensure_secret_key(tmp_path / "local.env") is False          # kept at the next start
    started = _settings_import(env)
    assert started.returncode == 0 and started.stdout.strip() == key[:4]


@pytest.mark.parametrize("origin, host, scheme, accepted", [
    ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws", True),
    ("http://127.0.0.1", "127.0.0.1", "ws", True),
    ("http://127.0.0.1:80", "127.0.0.1", "ws", True),
    ("https://localhost", "localhost:443", "wss", True),
    ("http://127.0.0.1:9999", "127.0.0.1:8000", "ws", False),     # another service on the same host
    ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", False),    # another scheme
    ("http://evil.example:8000", "127.0.0.1:8000", "ws", False),
    ("http://evil.example", "evil.example", "ws", False),         # not an allowed host
    ("null", "127.0.0.1:8000", "ws", False),
    ("", "127.0.0.1:8000", "ws", False),
])
def test_websocket_origin_must_match_scheme_host_and_port(origin, host, scheme, accepted):
    scope = {"type": "websocket", "scheme": scheme,
             "headers": [(b"origin", origin.encode()), (b"host", host.encode())]}
    assert same_origin(scope) is accepted


def test_console_origin_setting_pins_the_origin_behind_a_proxy(settings):
    settings.CONSOLE_ORIGIN = "https://127.0.0.1:8443"
    scope = {"type": "websocket", "scheme": "ws", "headers": [(b"host", b"127.0.0.1:8000")]}
    assert same_origin({**scope, "headers": scope["headers"] + [(b"origin", b"https://127.0.0.1:8443")]})
    assert not same_origin({**scope, "headers": scope["headers"] + [(b"origin", b"http://127.0.0.1:8000")]})


def test_a_socket_from_another_port_is_refused_through_the_asgi_stack(db, users):
    from console.asgi import application

    client = Client()
    client.force_login(users["viewer"])
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    communicator = WebsocketCommunicator(application, "/ws/clusters/1/overview/", headers=[
        (b"origin", b"http://127.0.0.1:9999"), (b"host", b"127.0.0.1:8000"), (b"cookie", cookie)])

    async def scenario():
        connected, _ = await communicator.connect(timeout=10)
        await communicator.disconnect()
        return connected
    assert async_to_sync(scenario)() is False


def test_manage_py_says_what_is_wrong_without_a_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env.update(DJANGO_SETTINGS_MODULE="console.settings", LOCAL_ENV_FILE=str(tmp_path / "local.env"))
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("Configuration error: SECRET_KEY is not set.") and "Traceback" not in result.stderr
