"""Which connector config values are secrets, so no page, JSON answer or audit entry shows
them: keys the plugin declares as PASSWORD, keys whose names say they hold one, and the keys
Kafka's clients and Confluent's serializers declare as PASSWORD, under any prefix a connector
config gives them (`producer.override.ssl.keystore.key`,
`value.converter.basic.auth.user.info`). Connect itself hands every value back in clear text."""
from __future__ import annotations

import re

HIDDEN = "[hidden]"
_SECRET_NAME = re.compile(r"(password|passwd|secret|token|credential|jaas|api[._-]?key|private[._-]?key)", re.I)
# PASSWORD keys of Kafka's clients (SslConfigs, SaslConfigs) and of Confluent's schema registry
# client (basic.auth.user.info is `user:password`) that the names above do not give away.
_PASSWORD_KEYS = ("ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates",
                  "basic.auth.user.info")


def is_secret(key: str, password_keys: frozenset[str] = frozenset()) -> bool:
    return key in password_keys or bool(_SECRET_NAME.search(key)) or \
        any(key == name or key.endswith("." + name) for name in _PASSWORD_KEYS)


def masked(config: dict, password_keys: frozenset[str] = frozenset()) -> dict:
    return {k: (HIDDEN if v not in (None, "") and is_secret(k, password_keys) else v) for k, v in config.items()}


# A JSON key and its value: a string, or a bare number, true, false or null.
_JSON_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:\s*)("(?:[^"\\]|\\.)*"|[^\s,:{}\[\]"]+)')


def masked_json_text(text: str, password_keys: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
    """`text`, a connector as typed in JSON, with the value of every secret key `[hidden]`, and
    the keys whose typed values that hid (a value already `[hidden]` is not one). It works on the
    text, not on parsed JSON, so that a document with a syntax error can be shown back to be
    mended, still without its secrets."""
    typed = []

    def hide(pair: re.Match) -> str:
        key, value = pair.group(1), pair.group(3)
        if value in ('""', "null") or not is_secret(key, password_keys):
            return pair.group(0)
        if value != f'"{HIDDEN}"':
            typed.append(key)
        return f'"{key}"{pair.group(2)}"{HIDDEN}"'

    return _JSON_PAIR.sub(hide, text), typed
