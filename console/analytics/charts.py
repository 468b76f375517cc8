"""Plotly time series for the analytics pages: zoomable (drag to zoom, double-click to reset,
a range slider under the lag chart), built in Python, drawn by static/js/charts.js."""
from __future__ import annotations

from collections import defaultdict

import plotly.graph_objects as go

from console.analytics import lake as L
from console.charts import base_layout, figure_data


def _time_layout(*, title: str, y_title: str, slider: bool = False) -> go.Layout:
    layout = base_layout(title=title, x_title="Time (UTC)", y_title=y_title)
    layout.xaxis.type = "date"
    layout.xaxis.rangeslider = {"visible": slider, "thickness": 0.08}
    layout.height = 320 if slider else 260
    return layout


def _series(rows: list[dict], *, key: str | None, y: str) -> dict[str, tuple[list, list]]:
    series: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for row in rows:
        xs, ys = series[str(row[key]) if key else "all"]
        xs.append(row[L.BUCKET])
        ys.append(row[y])
    return series


def time_series_chart(rows: list[dict], *, title: str, y: str, y_title: str, key: str | None = None,
                      name: str = "", slider: bool = False) -> dict:
    traces = [go.Scatter(x=xs, y=ys, mode="lines", name=name or label, line={"width": 1.5})
              for label, (xs, ys) in sorted(_series(rows, key=key, y=y).items())]
    return figure_data(go.Figure(data=traces, layout=_time_layout(title=title, y_title=y_title, slider=slider)))


def group_lag_chart(rows: list[dict]) -> dict:
    return time_series_chart(rows, title="Total lag", y=L.LAG, y_title="Records", name="lag", slider=True)


def partition_lag_chart(rows: list[dict]) -> dict:
    for row in rows:
        row["_series"] = f"{row[L.TOPIC]}-{row[L.PARTITION]}"
    return time_series_chart(rows, title="Lag per partition", y=L.LAG, y_title="Records", key="_series")


def histogram_chart(rows: list[dict], *, x: str, title: str, x_title: str) -> dict:
    """Counts per bin (the bin's lower bound on x), as bars."""
    layout = base_layout(title=title, x_title=x_title, y_title="Records")
    layout.xaxis.type = "linear"
    trace = go.Bar(x=[r[x] for r in rows], y=[r["count"] for r in rows], name="records")
    return figure_data(go.Figure(data=[trace], layout=layout))
