"""Writes for clusters."""
from __future__ import annotations

from console.clusters.models import Cluster

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
