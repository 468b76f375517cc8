"""Groups with committed offsets, made through the gateway (admin commits, as AlterConsumerGroupOffsets)."""
from __future__ import annotations

import pytest

from console.clusters.gateway import cluster_gateway


def commit(cluster, group_id: str, offsets: dict[tuple[str, int], int], metadata: str = "") -> None:
    with cluster_gateway(cluster) as gw:
        coordinator = gw.groups.find_coordinators([group_id]).found[group_id]
        failed = gw.groups.commit_offsets(group_id, coordinator=coordinator,
                                          offsets={tp: (o, metadata) for tp, o in offsets.items()})
    assert failed == {}


def committed(cluster, group_id: str) -> dict[tuple[str, int], int]:
    with cluster_gateway(cluster) as gw:
        coordinator = gw.groups.find_coordinators([group_id]).found[group_id]
        offsets = gw.groups.committed_offsets({group_id: coordinator}).offsets[group_id]
    return {tp: c.offset for tp, c in offsets.items()}


@pytest.fixture
def unique_group(request):
    counter = iter(range(1000))
    base = "g-" + request.node.name[:80]
    return lambda suffix="": f"{base}-{suffix}-{next(counter)}"
