import os
import re

from django.core.exceptions import ValidationError
from django.db import models

from console.errors import ConsoleError
from console.kafka_gateway.records import ConnectionSettings

_HOST_PORT = re.compile(r"^[A-Za-z0-9._\-\[\]:]+:\d{1,5}$")


def validate_bootstrap_servers(value: str) -> None:
    servers = [s.strip() for s in value.split(",")]
    if not all(servers) or not all(_HOST_PORT.match(s) for s in servers):
        raise ValidationError("Use host:port pairs separated by commas, e.g. 127.0.0.1:9092,127.0.0.1:9093.")


class Cluster(models.Model):
    """A Kafka cluster: where to bootstrap and how to authenticate.

    The SASL password itself never enters the database: `sasl_password_env` names the
    environment variable that holds it."""

    PROTOCOLS = [(p, p) for p in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")]
    MECHANISMS = [("", "none")] + [(m, m) for m in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")]

    name = models.CharField(max_length=200, unique=True)
    bootstrap_servers = models.CharField(max_length=1000, validators=[validate_bootstrap_servers])
    security_protocol = models.CharField(max_length=16, choices=PROTOCOLS, default="PLAINTEXT")
    sasl_mechanism = models.CharField(max_length=16, choices=MECHANISMS, blank=True, default="")
    sasl_username = models.CharField(max_length=200, blank=True, default="")
    sasl_password_env = models.CharField(max_length=200, blank=True, default="",
                                         help_text="Name of the environment variable holding the SASL password.")
    is_bundled = models.BooleanField(default=False, help_text="The engine that `make run` starts.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-is_bundled", "name"]
        constraints = [models.UniqueConstraint(fields=["is_bundled"], condition=models.Q(is_bundled=True),
                                               name="one_bundled_cluster")]

    def __str__(self) -> str:
        return self.name

    def connection_settings(self) -> ConnectionSettings:
        password = ""
        if self.sasl_mechanism:
            password = os.environ.get(self.sasl_password_env, "") if self.sasl_password_env else ""
            if not password:
                raise ConsoleError(f"Cluster {self.name!r} uses SASL, but the environment variable "
                                   f"{self.sasl_password_env or '(none set)'} holding its password is empty.")
        return ConnectionSettings(bootstrap_servers=self.bootstrap_servers, security_protocol=self.security_protocol,
                                  sasl_mechanism=self.sasl_mechanism, sasl_username=self.sasl_username,
                                  sasl_password=password)


class KnownBroker(models.Model):
    """A broker the console has seen in a Metadata response (or in the engine's broker list).

    Metadata lists live brokers only; remembering the others is how the overview can say
    "broker 2 is down" instead of silently showing two brokers. (Moved here from the brokers
    app, table unchanged, so the cluster overview reads it without importing an app above it.)"""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="known_brokers")
    broker_id = models.IntegerField()
    host = models.CharField(max_length=255)
    port = models.IntegerField()
    rack = models.CharField(max_length=255, blank=True, default="")
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()

    class Meta:
        db_table = "brokers_knownbroker"
        ordering = ["cluster", "broker_id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "broker_id"], name="one_row_per_broker")]

    def __str__(self) -> str:
        return f"{self.cluster_id}/{self.broker_id} {self.host}:{self.port}"
