"""Analytics pages and the "run now" action. Pages read job results (selectors); Spark runs
only in the analytics Celery worker."""
from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.analytics import charts, selectors, services
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.web import page


@page(VIEWER)
def cluster_analytics(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.cluster_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster)
    return render(request, "analytics/cluster.html", {
        "cluster": cluster, "view": view,
        "broker_chart": charts.time_series_chart(view["broker_bytes"], title="Bytes per broker", y="size_bytes",
                                                 y_title="Bytes", key="broker_id"),
        "production_chart": charts.time_series_chart(view["production"], title="Records produced per second",
                                                     y="records_per_second", y_title="Records/s", key="topic")})


@page(VIEWER)
def group_analytics(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.group_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster, group_id=group_id,
                                     resolution=request.GET.get("resolution", "5m"))
    return render(request, "analytics/group.html", {
        "cluster": cluster, "view": view, "resolutions": selectors.RESOLUTIONS,
        "lag_chart": charts.group_lag_chart(view["lag_history"]),
        "partition_chart": charts.partition_lag_chart(view["partition_lag_history"]),
        "consumption_chart": charts.time_series_chart(view["consumption"], title="Records consumed per second",
                                                      y="records_per_second", y_title="Records/s")})


@page(VIEWER)
def topic_analytics(request, cluster_id: int, topic: str):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.topic_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster, topic=topic)
    return render(request, "analytics/topic.html", {
        "cluster": cluster, "view": view,
        "bytes_chart": charts.time_series_chart(view["bytes"], title="Bytes", y="size_bytes", y_title="Bytes",
                                                slider=True),
        "production_chart": charts.time_series_chart(view["production"], title="Records produced per second",
                                                     y="records_per_second", y_title="Records/s")})


@page(OPERATOR)
@require_POST
def run_now(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    try:
        run = services.analytics_run_request(cluster=cluster, actor=request.user)
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



