"""Which connector config values are secrets, so no page, JSON answer or audit entry shows
them: keys the plugin declares as PASSWORD, and keys whose names say they hold one (Connect
itself hands every value back in clear text)."""
from __future__ import annotations

import re

HIDDEN = "[hidden]"
_SECRET_NAME = re.compile(r"(password|passwd|secret|token|credential|jaas|api[._-]?key|private[._-]?key)", re.I)


def is_secret(key: str, password_keys: frozenset[str] = frozenset()) -> bool:
    return key in password_keys or bool(_SECRET_NAME.search(key))


def masked(config: dict, password_keys: frozenset[str] = frozenset()) -> dict:
    return {k: (HIDDEN if v not in (None, "") and is_secret(k, password_keys) else v) for k, v in config.items()}
