"""The local environment file: settings for one machine, kept out of git (`local.env`).

`make run` creates it at first start with a random SECRET_KEY, so the two commands on a fresh
machine still just work while a deployment without DEBUG must set SECRET_KEY itself. Settings
read it before anything else; variables already in the environment win over the file.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def local_env_path() -> Path:
    return Path(os.environ.get("LOCAL_ENV_FILE", ROOT / "local.env"))


def read_local_env(path: Path) -> dict[str, str]:
    """KEY=VALUE lines; blank lines and # comments skipped. A missing file is empty."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


BUNDLED_BROKERS = 3      # `make run` starts this many brokers, on ENGINE_PORT and the ports after it


def engine_port() -> int:
    """The first broker port of the bundled engine: ENGINE_PORT, else Kafka's 9092."""
    raw = os.environ.get("ENGINE_PORT", "9092")
    if not raw.strip().isdigit() or not 0 < int(raw) <= 65535 - BUNDLED_BROKERS:
        raise ValueError(f"ENGINE_PORT={raw!r} is not a port number (1-{65535 - BUNDLED_BROKERS})")
    return int(raw)


def bundled_bootstrap(port: int | None = None) -> str:
    """The bootstrap list of the engine `make run` starts: every broker's real port."""
    first = engine_port() if port is None else port
    return ",".join(f"127.0.0.1:{first + i}" for i in range(BUNDLED_BROKERS))


def load_local_env() -> None:
    for key, value in read_local_env(local_env_path()).items():
        os.environ.setdefault(key, value)


def ensure_secret_key(path: Path) -> bool:
    """Add a random SECRET_KEY to the file unless it (or the environment) has one; True if added."""
    if os.environ.get("SECRET_KEY") or read_local_env(path).get("SECRET_KEY"):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_text() if path.exists() else "# Local settings for this machine (make run). Not in git.\n"
    if existing and not existing.endswith("\n"):
        existing += "\n"
    path.write_text(existing + f"SECRET_KEY={secrets.token_urlsafe(50)}\n")
    path.chmod(0o600)
    return True


if __name__ == "__main__":   # `python -m console.localenv`: the first step of `make run`
    target = local_env_path()
    if ensure_secret_key(target):
        print(f"Generated a SECRET_KEY into {target}.")
