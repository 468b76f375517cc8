"""The analytics JSON API: the same selectors and services as the pages. The what-if is started
by a POST (form-encoded, CSRF-checked like every POST, operator role, audited) and answers 400
with the form's errors."""
from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.http import require_http_methods

from console.accounts.roles import OPERATOR, VIEWER, has_role
from console.analytics import selectors, services
from console.analytics.forms import WhatIfForm
from console.clusters.selectors import cluster_get
from console.errors import InvalidInput
from console.web import json_api


@json_api(VIEWER)
def cluster_analytics(request, cluster_id: int):
    return selectors.cluster_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id))


@json_api(VIEWER)
def group_analytics(request, cluster_id: int, group_id: str):
    """?resolution=1m|5m|1h"""
    return selectors.group_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id),
                                     group_id=group_id, resolution=request.GET.get("resolution", "5m"))


@json_api(VIEWER)
def topic_analytics(request, cluster_id: int, topic: str):
    return selectors.topic_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id),
                                     topic=topic)


@json_api(VIEWER)
@require_http_methods(["GET", "POST"])
def topic_what_if(request, cluster_id: int, topic: str):
    """GET: the topic's newest what-if ({run, params, result}, null before the first).
    POST retention_ms=&retention_bytes=: queue a new one (operator); answers {run, state}."""
    cluster = cluster_get(cluster_id=cluster_id)
    if request.method == "GET":
        return {"what_if": selectors.what_if_latest(cluster=cluster, topic=topic)}
    if not has_role(request.user, OPERATOR):
        return JsonResponse({"error": f"This needs the {OPERATOR} role."}, status=403)
    form = WhatIfForm(request.POST)
    if not form.is_valid():
        raise InvalidInput("; ".join(f"{'form' if f == '__all__' else f}: {' '.join(e)}"
                                     for f, e in form.errors.items()))
    run = services.what_if_request(cluster=cluster, actor=request.user, topic=topic,
                                   retention_ms=form.cleaned_data["retention_ms"],
                                   retention_bytes=form.cleaned_data["retention_bytes"])
    return JsonResponse({"run": run.pk, "state": run.state, "params": run.params}, status=202)


@json_api(VIEWER)
def group_statuses(request, cluster_id: int):
    """{group_id: {status, severity, reason, lag}}: Burrow-style status of every group."""
    return selectors.group_statuses(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id))
