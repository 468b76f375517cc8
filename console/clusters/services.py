"""Writes for clusters."""
from __future__ import annotations

from django.core.exceptions import ValidationError

from console.accounts.services import audited
from console.clusters.models import Cluster
from console.errors import InvalidInput

BUNDLED_NAME = "local engine"


def cluster_create(*, name: str, bootstrap_servers: str, security_protocol: str = "PLAINTEXT",
                   sasl_mechanism: str = "", sasl_username: str = "", sasl_password_env: str = "") -> Cluster:
    cluster = Cluster(name=name, bootstrap_servers=bootstrap_servers, security_protocol=security_protocol,
                      sasl_mechanism=sasl_mechanism, sasl_username=sasl_username,
                      sasl_password_env=sasl_password_env)
    cluster.full_clean()
    cluster.save()
    return cluster


def cluster_register_bundled(*, bootstrap_servers: str, using: str = "default") -> Cluster:
    """The bundled engine's row: created once, its bootstrap kept in step with ENGINE_BOOTSTRAP."""
    cluster = Cluster.objects.using(using).filter(is_bundled=True).first()
    if cluster is None:
        return Cluster.objects.using(using).create(name=BUNDLED_NAME, bootstrap_servers=bootstrap_servers,
                                                   is_bundled=True)
    if cluster.bootstrap_servers != bootstrap_servers:
        cluster.bootstrap_servers = bootstrap_servers
        cluster.save(using=using, update_fields=["bootstrap_servers"])
    return cluster


def cluster_add(*, actor, name: str, bootstrap_servers: str, security_protocol: str = "PLAINTEXT",
                sasl_mechanism: str = "", sasl_username: str = "", sasl_password_env: str = "") -> Cluster:
    """Register a cluster from the console (admins), audited. Nothing is asked of the cluster
    here: one that does not answer yet is still worth registering, and its overview says so."""
    with audited(actor=actor, cluster=None, action="cluster.add", target=name,
                 details={"bootstrap_servers": bootstrap_servers, "security_protocol": security_protocol,
                          "sasl_mechanism": sasl_mechanism}):
        try:
            return cluster_create(name=name, bootstrap_servers=bootstrap_servers, security_protocol=security_protocol,
                                  sasl_mechanism=sasl_mechanism, sasl_username=sasl_username,
                                  sasl_password_env=sasl_password_env)
        except ValidationError as exc:
            raise InvalidInput(" ".join(m for messages in exc.message_dict.values() for m in messages)) from None


def cluster_remove(*, actor, cluster: Cluster, confirmation: str) -> None:
    """Forget a registered cluster (nothing on the cluster changes). The bundled engine stays."""
    with audited(actor=actor, cluster=cluster, action="cluster.remove", target=cluster.name, details={}):
        if cluster.is_bundled:
            raise InvalidInput("The bundled engine cannot be removed: `make run` registers it at every start.")
        if confirmation != cluster.name:
            raise InvalidInput(f"Type the cluster's name, {cluster.name}, to confirm.")
        cluster.delete()
