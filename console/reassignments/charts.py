"""The review page's chart: replicas and leaders per broker, before and after the plan."""
from __future__ import annotations

import plotly.graph_objects as go

from console.charts import COLORS, base_layout, figure_data


def plan_load_chart(*, brokers: list[dict]) -> dict:
    ids = [str(b["broker"]) for b in brokers]
    figure = go.Figure(
        data=[go.Bar(name="Replicas before", x=ids, y=[b["replicas_before"] for b in brokers],
                     marker_color=COLORS["replicas"], opacity=0.45),
              go.Bar(name="Replicas after", x=ids, y=[b["replicas_after"] for b in brokers],
                     marker_color=COLORS["replicas"]),
              go.Bar(name="Leaders before", x=ids, y=[b["leaders_before"] for b in brokers],
                     marker_color=COLORS["leaders"], opacity=0.45),
              go.Bar(name="Leaders after", x=ids, y=[b["leaders_after"] for b in brokers],
                     marker_color=COLORS["leaders"])],
        layout=base_layout(title="Replicas and preferred leaders per broker, before and after",
                           x_title="Broker", y_title="Partitions"))
    return figure_data(figure)
