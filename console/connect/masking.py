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
