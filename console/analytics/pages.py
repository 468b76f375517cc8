"""What the analytics pages show, built once for the page view and for its live fragment
(console/analytics/live.py): the selectors' results and their Plotly figures."""
from __future__ import annotations

from django.conf import settings

from console.analytics import charts, selectors
from console.analytics.lake import AGE_BIN_SECONDS, SIZE_BIN_BYTES
from console.clusters.models import Cluster


def cluster_context(*, cluster: Cluster) -> dict:
    view = selectors.cluster_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster)
    return {
        "cluster": cluster, "view": view,
        "broker_chart": charts.time_series_chart(view["broker_bytes"], title="Bytes per broker", y="size_bytes",
                                                 y_title="Size", key="broker_id", unit="bytes"),
        "production_chart": charts.time_series_chart(view["production"], title="Records produced per second",
                                                     y="records_per_second", y_title="Records/s", key="topic")}


def group_context(*, cluster: Cluster, group_id: str, resolution: str) -> dict:
    view = selectors.group_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster, group_id=group_id,
                                     resolution=resolution)
    return {
        "cluster": cluster, "view": view, "resolutions": selectors.RESOLUTIONS,
        "lag_chart": charts.group_lag_chart(view["lag_history"]),
        "partition_chart": charts.partition_lag_chart(view["partition_lag_history"]),
        "consumption_chart": charts.time_series_chart(view["consumption"], title="Records consumed per second",
                                                      y="records_per_second", y_title="Records/s")}


def topic_context(*, cluster: Cluster, topic: str) -> dict:
    view = selectors.topic_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster, topic=topic)
    return {
        "cluster": cluster, "view": view,
        "bytes_chart": charts.time_series_chart(view["bytes"], title="Size on disk", y="size_bytes", y_title="Size",
                                                slider=True, unit="bytes"),
        "production_chart": charts.time_series_chart(view["production"], title="Records produced per second",
                                                     y="records_per_second", y_title="Records/s"),
        "sizes_chart": charts.histogram_chart(view["record_sizes"], x="size_bin_bytes", width=SIZE_BIN_BYTES,
                                              title="Record sizes", x_title="Size (key, value, headers)", unit="bytes"),
        "ages_chart": charts.histogram_chart(view["record_ages"], x="age_bin_seconds", width=AGE_BIN_SECONDS,
                                             title="Record ages", x_title="Age", unit="seconds")}
