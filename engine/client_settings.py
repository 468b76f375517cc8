"""Kafka client settings, spelled as Kafka's Java clients spell them (`bootstrap.servers`,
`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, `ssl.truststore.location` with PEM
files, `acks`, `linger.ms`...), translated for the Python clients the worker and the command
line tools use: kafka-python's keyword arguments and librdkafka's (confluent-kafka) settings.

`sasl.jaas.config` gives the PLAIN or SCRAM user and password
(`...LoginModule required username="u" password="p";`). SSL takes the stores Kafka's clients
take (engine/security/keystores.py): PEM or PKCS12 files (`ssl.truststore.location`,
`ssl.keystore.location` with their passwords) or inline PEM (`ssl.truststore.certificates`,
`ssl.keystore.key` with `ssl.keystore.certificate.chain`); a store in Java's proprietary JKS
format is refused with the keytool command that converts it. kafka-python gets an SSLContext
built from them; librdkafka reads PEM and PKCS12 files itself and inline PEM as its `*.pem`
settings.
"""
from __future__ import annotations

import re

from engine.security import keystores

_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _jaas(settings: dict[str, str]) -> tuple[str, str]:
    options = dict(_JAAS.findall(settings.get("sasl.jaas.config", "")))
    return options.get("username", ""), options.get("password", "")


def kafka_python_settings(settings: dict[str, str]) -> dict:
    """kafka-python keyword arguments from Kafka-named settings."""
    out = {"bootstrap_servers": settings["bootstrap.servers"]}
    protocol = settings.get("security.protocol", "PLAINTEXT").upper()
    out["security_protocol"] = protocol
    if protocol.startswith("SASL"):
        user, password = _jaas(settings)
        out.update(sasl_mechanism=settings.get("sasl.mechanism", "PLAIN"), sasl_plain_username=user,
                   sasl_plain_password=password)
    if protocol.endswith("SSL"):
        out["ssl_context"] = keystores.client_context(settings)
        out["ssl_check_hostname"] = out["ssl_context"].check_hostname
    if settings.get("client.id"):
        out["client_id"] = settings["client.id"]
    return out


# Kafka's client settings that librdkafka knows under the same name (others are left out).
_LIBRDKAFKA_SAME = {"acks", "linger.ms", "batch.size", "compression.type", "enable.idempotence", "client.id",
                    "fetch.min.bytes", "fetch.max.wait.ms", "auto.offset.reset", "isolation.level",
                    "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "request.timeout.ms",
                    "retries", "retry.backoff.ms", "max.in.flight.requests.per.connection", "fetch.max.bytes",
                    "max.partition.fetch.bytes", "partition.assignment.strategy", "group.instance.id"}


def librdkafka_settings(settings: dict[str, str]) -> dict:
    """confluent-kafka (librdkafka) settings from Kafka-named settings."""
    out = {"bootstrap.servers": settings["bootstrap.servers"]}
    protocol = settings.get("security.protocol", "PLAINTEXT").upper()
    out["security.protocol"] = protocol
    if protocol.startswith("SASL"):
        user, password = _jaas(settings)
        out.update({"sasl.mechanism": settings.get("sasl.mechanism", "PLAIN"), "sasl.username": user,
                    "sasl.password": password})
    if protocol.endswith("SSL"):
        out.update(_librdkafka_trust_store(settings))
        out.update(_librdkafka_key_store(settings))
        out["ssl.endpoint.identification.algorithm"] = \
            "https" if settings.get("ssl.endpoint.identification.algorithm", "https") else "none"
    out.update({k: v for k, v in settings.items() if k in _LIBRDKAFKA_SAME})
    if "partition.assignment.strategy" in out:   # Kafka's class names to librdkafka's
        out["partition.assignment.strategy"] = ",".join(
            _ASSIGNORS.get(s.strip().rsplit(".", 1)[-1], s.strip())
            for s in out["partition.assignment.strategy"].split(","))
    return out


def _librdkafka_trust_store(settings: dict[str, str]) -> dict:
    kind = keystores.store_kind(settings, "ssl.truststore")
    if kind == "PEM":
        return {"ssl.ca.location": settings["ssl.truststore.location"]}
    if kind is not None:      # PKCS12 or inline: librdkafka takes the certificates as PEM text
        return {"ssl.ca.pem": keystores.read_trust_store(settings).decode()}
    return {}


def _librdkafka_key_store(settings: dict[str, str]) -> dict:
    kind = keystores.store_kind(settings, "ssl.keystore")
    out: dict = {}
    if kind == "PEM":
        out["ssl.certificate.location"] = out["ssl.key.location"] = settings["ssl.keystore.location"]
    elif kind == "PKCS12":
        out["ssl.keystore.location"] = settings["ssl.keystore.location"]
        if settings.get("ssl.keystore.password"):
            out["ssl.keystore.password"] = settings["ssl.keystore.password"]
    elif kind == "inline":
        out["ssl.certificate.pem"] = settings.get("ssl.keystore.certificate.chain", "")
        out["ssl.key.pem"] = settings.get("ssl.keystore.key", "")
    if kind in ("PEM", "inline") and settings.get("ssl.key.password"):
        out["ssl.key.password"] = settings["ssl.key.password"]
    return out


_ASSIGNORS = {"RangeAssignor": "range", "RoundRobinAssignor": "roundrobin",
              "CooperativeStickyAssignor": "cooperative-sticky"}
