"""Plotly time series for the analytics pages: zoomable (drag to zoom, double-click to reset,
a range slider under the lag chart), built in Python, drawn by static/js/charts.js.

Before the lake holds two snapshots a series is one point: it is drawn as a marker at the
right end of the hour before it (the axis never runs into a future with no data), and the
chart says "one snapshot so far" (a line needs two); with none, the chart says so instead of
drawing empty axes. Markers are not clipped at the axis' ends, so the newest point is whole."""
from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

import plotly.graph_objects as go

from console.analytics import lake as L
from console.charts import base_layout, empty_figure, figure_data, histogram_figure, unit_axis

NO_SNAPSHOT = "No snapshot in the lake yet: the collector adds one every few seconds."
ONE_SNAPSHOT = "One snapshot so far: the line starts with the next one."
ONE_POINT_WINDOW = timedelta(hours=1)


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
                      name: str = "", slider: bool = False, unit: str | None = None,
                      empty: str = NO_SNAPSHOT) -> dict:
    """One line per `key` (or one line), y in `unit`'s human form ("bytes") when given."""
    series = _series(rows, key=key, y=y)
    if not series:
        return empty_figure(title=title, message=empty)
    times = sorted({x for xs, _ in series.values() for x in xs})
    traces = [go.Scatter(x=xs, y=ys, mode="lines+markers" if len(xs) < 3 else "lines", name=name or label,
                         line={"width": 1.5}, marker={"size": 7}, cliponaxis=False)
              for label, (xs, ys) in sorted(series.items())]
    layout = _time_layout(title=title, y_title=y_title, slider=slider and len(times) > 1)
    if unit:
        layout.yaxis.update(unit_axis([v for _, ys in series.values() for v in ys], unit=unit, low=0))
    if len(times) == 1:
        layout.xaxis.range = [times[0] - ONE_POINT_WINDOW, times[0]]
        layout.annotations = [{"text": ONE_SNAPSHOT, "showarrow": False, "xref": "paper", "yref": "paper",
                               "x": 0.5, "y": 1.0, "yanchor": "bottom", "font": {"size": 11}}]
    return figure_data(go.Figure(data=traces, layout=layout))


def group_lag_chart(rows: list[dict]) -> dict:
    return time_series_chart(rows, title="Total lag", y=L.LAG, y_title="Records", name="lag", slider=True)


def partition_lag_chart(rows: list[dict]) -> dict:
    for row in rows:
        row["_series"] = f"{row[L.TOPIC]}-{row[L.PARTITION]}"
    return time_series_chart(rows, title="Lag per partition", y=L.LAG, y_title="Records", key="_series")


NO_CONTENTS = "No contents analysis yet: it reads the newest records of every topic every few hours."


def histogram_chart(rows: list[dict], *, x: str, width: float, title: str, x_title: str, unit: str) -> dict:
    """Counts per bin (rows: the bin's lower edge in `x`, and "count"), the bin edges on the axis."""
    return histogram_figure(rows, x=x, width=width, title=title, x_title=x_title, unit=unit, empty=NO_CONTENTS)
