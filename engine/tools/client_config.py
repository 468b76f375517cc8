"""`--command-config FILE`: a Kafka client properties file, as Kafka's tools take it, turned into
kafka-python settings, so the operator commands reach SASL and TLS listeners too.

Understood (Kafka's names): `security.protocol`, `sasl.mechanism`, `sasl.jaas.config` (the
`username="..." password="..."` of PlainLoginModule / ScramLoginModule), and for TLS in PEM
files `ssl.truststore.location` (the CA certificates), `ssl.keystore.location` (a client key
and certificate) with `ssl.key.password`, and `ssl.endpoint.identification.algorithm=` (empty:
no host name check). Other names are reported and ignored, as Kafka's clients warn of unused
configs. The file holds a password: its content never reaches an error message.
"""
from __future__ import annotations

import re
from pathlib import Path

PROTOCOLS = ("PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL")
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
_USED = {"security.protocol", "sasl.mechanism", "sasl.jaas.config", "ssl.truststore.location", "ssl.truststore.type",
         "ssl.keystore.location", "ssl.keystore.type", "ssl.key.password", "ssl.endpoint.identification.algorithm"}


class ClientConfigError(ValueError):
    """The file cannot be used; the message names the file and the line, never a value."""


def read_properties(path: str) -> dict[str, str]:
    """Java properties, the subset Kafka's config files use: `name=value` or `name: value` lines,
    `#` and `!` comments, a trailing backslash continuing a line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ClientConfigError(f"cannot read {path}: {exc.strerror}") from None
    properties, pending = {}, ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line[0] in "#!":
            continue
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", line)
        if match is None:
            raise ClientConfigError(f"{path}, line {number}: expected name=value")
        properties[match.group(1)] = match.group(2)
    return properties


def kafka_python_settings(properties: dict[str, str]) -> tuple[dict, list[str]]:
    """(kafka-python keyword arguments, the names that were ignored)."""
    settings: dict = {}
    protocol = properties.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ClientConfigError(f"security.protocol must be one of {', '.join(PROTOCOLS)}")
    settings["security_protocol"] = protocol
    if protocol.startswith("SASL_"):
        settings["sasl_mechanism"] = properties.get("sasl.mechanism", "GSSAPI").strip().upper()
        options = dict(_JAAS_OPTION.findall(properties.get("sasl.jaas.config", "")))
        if "username" not in options or "password" not in options:
            raise ClientConfigError("sasl.jaas.config needs username=\"...\" and password=\"...\"")
        settings["sasl_plain_username"] = options["username"]
        settings["sasl_plain_password"] = options["password"]
    if protocol.endswith("SSL"):
        for name in ("ssl.truststore.type", "ssl.keystore.type"):
            if properties.get(name, "PEM").strip().upper() != "PEM":
                raise ClientConfigError(f"{name}: only PEM files are supported")
        if properties.get("ssl.truststore.location"):
            settings["ssl_cafile"] = properties["ssl.truststore.location"].strip()
        if properties.get("ssl.keystore.location"):
            settings["ssl_certfile"] = settings["ssl_keyfile"] = properties["ssl.keystore.location"].strip()
        if properties.get("ssl.key.password"):
            settings["ssl_password"] = properties["ssl.key.password"]
        if properties.get("ssl.endpoint.identification.algorithm", "https").strip() == "":
            settings["ssl_check_hostname"] = False
    return settings, sorted(set(properties) - _USED)
