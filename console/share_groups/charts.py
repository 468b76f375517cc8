"""The share group page's chart: lag, records in flight and poison records archived over time,
from the analytics job `share_group_lag_<resolution>` (console.analytics.jobs.share); drawn by
static/js/charts.js like the analytics pages' time series."""
from __future__ import annotations

import plotly.graph_objects as go

from console.analytics import lake as L
from console.charts import base_layout, figure_data


def share_lag_chart(*, history: list[dict]) -> dict:
    layout = base_layout(title="Lag, in flight and archived over time", x_title="Time (UTC)", y_title="Records")
    layout.xaxis.type = "date"
    layout.height = 300
    times = [r[L.BUCKET] for r in history]
    traces = [go.Scatter(x=times, y=[r[L.LAG] for r in history], mode="lines", name="lag", line={"width": 1.5})]
    for column, name in ((L.IN_FLIGHT, "in flight"), (L.ARCHIVED_POISON, "archived (poison), so far")):
        if any(r[column] is not None for r in history):
            traces.append(go.Scatter(x=times, y=[r[column] for r in history], mode="lines", name=name,
                                     line={"width": 1.2}))
    return figure_data(go.Figure(data=traces, layout=layout))
