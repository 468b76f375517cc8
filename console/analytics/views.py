"""Analytics pages and their actions ("run now", the retention what-if). Pages read job results
(selectors, via pages.py); Spark runs only in the analytics Celery worker."""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.analytics import pages, services
from console.analytics.forms import WhatIfForm
from console.analytics.models import AnalyticsRun
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.web import form_error, page

RUN_KINDS = (AnalyticsRun.LAKE, AnalyticsRun.RECORDS)


@page(VIEWER)
def cluster_analytics(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    return render(request, "analytics/cluster.html", pages.cluster_context(cluster=cluster))


@page(VIEWER)
def group_analytics(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    return render(request, "analytics/group.html", pages.group_context(
        cluster=cluster, group_id=group_id, resolution=request.GET.get("resolution", "5m")))


@page(VIEWER)
def topic_analytics(request, cluster_id: int, topic: str):
    cluster = cluster_get(cluster_id=cluster_id)
    return _topic_page(request, cluster, topic, WhatIfForm())


def _topic_page(request, cluster, topic: str, form: WhatIfForm, status: int = 200):
    return render(request, "analytics/topic.html", {**pages.topic_context(cluster=cluster, topic=topic),
                                                    "what_if_form": form}, status=status)


@page(OPERATOR)
@require_POST
def what_if(request, cluster_id: int, topic: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = WhatIfForm(request.POST)
    if form.is_valid():
        try:
            run = services.what_if_request(cluster=cluster, actor=request.user, topic=topic,
                                           retention_ms=form.cleaned_data["retention_ms"],
                                           retention_bytes=form.cleaned_data["retention_bytes"])
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"What-if run {run.pk} queued: the estimate appears below when it is done.")
            return redirect("analytics:topic", cluster.pk, topic)
    return _topic_page(request, cluster, topic, form, status=400)


@page(OPERATOR)
@require_POST
def run_now(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    kind = request.POST.get("kind") or AnalyticsRun.LAKE
    if kind not in RUN_KINDS:
        messages.error(request, f"Analytics not started: unknown kind of run {kind[:40]!r} (use lake or records).")
        return redirect(_safe_next(request, cluster.pk))
    try:
        run = services.analytics_run_request(cluster=cluster, actor=request.user, kind=kind)
    except ConsoleError as exc:
        messages.error(request, f"Analytics not started: {exc}")
    else:
        messages.success(request, f"Analytics run {run.pk} queued.")
    return redirect(_safe_next(request, cluster.pk))


def _safe_next(request, cluster_id: int) -> str:
    """Back to the page the button was on, only if it is one of ours."""
    target = request.POST.get("next", "")
    prefix = f"/clusters/{cluster_id}/analytics/"
    return target if target.startswith(prefix) and "//" not in target else prefix
