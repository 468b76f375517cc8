"""Quota tests share the session's engine: each that uses it starts and ends with no quota on
it (`no_quotas_left`), so a default-user quota never throttles another test's topic creations."""
import pytest

from console.clusters.gateway import cluster_gateway


def remove_every_quota(cluster) -> None:
    with cluster_gateway(cluster) as gw:
        for quota in gw.quotas.describe():
            gw.quotas.alter(quota.entity, remove=[key for key, _ in quota.values])


def set_quota(cluster, entity, key: str, value: float) -> None:
    """Set straight through the gateway (tests set up state; services are tested on their own)."""
    with cluster_gateway(cluster) as gw:
        gw.quotas.alter(entity, set_values={key: value})


def quotas_on(cluster) -> dict:
    """{entity: {key: value}} of every entity on the cluster."""
    with cluster_gateway(cluster) as gw:
        return {q.entity: dict(q.values) for q in gw.quotas.describe()}


@pytest.fixture
def no_quotas_left(cluster):
    remove_every_quota(cluster)
    yield
    remove_every_quota(cluster)
