"""The Schemas section as JSON: the subjects overview and one subject's versions."""
from dataclasses import asdict

from console.accounts.roles import VIEWER
from console.clusters.selectors import cluster_get
from console.schema_registry import selectors
from console.web import json_api


@json_api(VIEWER)
def subjects(request, cluster_id: int):
    overview = selectors.subjects_overview(cluster=cluster_get(cluster_id=cluster_id))
    return asdict(overview)


@json_api(VIEWER)
def subject(request, cluster_id: int, subject: str):
    detail = selectors.subject_detail(cluster=cluster_get(cluster_id=cluster_id), subject=subject)
    return {"subject": detail.subject, "level": detail.level, "own_level": detail.own_level, "mode": detail.mode,
            "versions": [asdict(v) for v in detail.versions]}
