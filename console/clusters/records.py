"""Small shapes shared by the selectors of several apps."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterRef:
    """The console's cluster row (not Kafka's cluster id) that a page is about."""

    id: int
    name: str

    @classmethod
    def of(cls, cluster) -> ClusterRef:
        return cls(id=cluster.pk, name=cluster.name)


# Dataclass field metadata: the field is for the server only, the JSON API leaves it out.
INTERNAL = {"internal": True}
# A record field whose own fields the JSON shows as the outer record's (console.web.ApiEncoder).
INLINE = {"inline": True}
