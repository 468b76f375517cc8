"""The engine admin interface's secret token (the interface: admin_server.py).

The token lives in `<data dir>/admin.token`, mode 0600. At start the engine reads that
file; if there is none it takes `ENGINE_ADMIN_TOKEN` from the environment when set, or a
fresh `secrets.token_urlsafe(32)`, and writes the file. Callers send it in the
`X-Engine-Admin-Token` header: a custom header forces a browser's CORS preflight, which the
listener never grants, so a web page cannot drive the interface.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

HEADER = "X-Engine-Admin-Token"
ENV = "ENGINE_ADMIN_TOKEN"
FILE_NAME = "admin.token"


def token_path(data_dir: Path | str) -> Path:
    return Path(data_dir) / FILE_NAME


def load_or_create(data_dir: Path | str) -> str:
    path = token_path(data_dir)
    if path.exists():
        token = path.read_text().strip()
        if token:
            return token
    token = os.environ.get(ENV) or secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created 0600 from the start: there is no moment at which another user could read it.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, token.encode() + b"\n")
    finally:
        os.close(fd)
    return token


def read_token(path: Path | str) -> str:
    """The token stored at `path` (for clients: the `broker` command, the console)."""
    token = Path(path).read_text().strip()
    if not token:
        raise ValueError(f"{path} is empty")
    return token
