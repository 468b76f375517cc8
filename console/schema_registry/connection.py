"""Which registry a cluster uses, and a client for it (None: the cluster has no registry)."""
from __future__ import annotations

from django.conf import settings

from console.clusters.models import Cluster, secret_from_env
from console.schema_registry.client import RegistryClient
from console.schema_registry.models import RegistrySettings


def registry_settings(cluster: Cluster) -> RegistrySettings | None:
    return RegistrySettings.objects.filter(cluster=cluster).first()


def registry_client(cluster: Cluster) -> RegistryClient | None:
    """The cluster's registry: its settings row, else for the bundled cluster the bundled registry
    (settings.SCHEMA_REGISTRY_URL, with the token the registry wrote into its token file)."""
    row = registry_settings(cluster)
    timeout = settings.SCHEMA_REGISTRY_TIMEOUT_SECONDS
    if row is None:
        if not cluster.is_bundled or not settings.SCHEMA_REGISTRY_URL:
            return None
        return RegistryClient.with_bearer(settings.SCHEMA_REGISTRY_URL, _bundled_token(), timeout) \
            if _bundled_token() else RegistryClient(settings.SCHEMA_REGISTRY_URL.rstrip("/"), "", timeout)
    if not row.url:
        return None
    if row.auth == RegistrySettings.BASIC:
        password = secret_from_env(row.secret_env, what="schema registry password", cluster_name=cluster.name)
        return RegistryClient.with_basic(row.url, row.username, password, timeout)
    if row.auth == RegistrySettings.BEARER:
        token = secret_from_env(row.secret_env, what="schema registry token", cluster_name=cluster.name)
        return RegistryClient.with_bearer(row.url, token, timeout)
    return RegistryClient(row.url.rstrip("/"), "", timeout)


def _bundled_token() -> str:
    """The first token of the bundled registry's token file ("ROLE TOKEN" lines)."""
    try:
        for line in settings.SCHEMA_REGISTRY_TOKEN_FILE.read_text().splitlines():
            parts = line.split()
            if parts and not parts[0].startswith("#"):
                return parts[-1]
    except OSError:
        pass
    return ""
