"""The group page's chart: lag per partition, one bar colour per topic, so the partition that
holds the group back shows at once. Partitions with an unknown lag are left out."""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from console.charts import base_layout, empty_figure, figure_data
from console.groups.selectors import PartitionRow


def partition_lag_chart(*, partitions: Sequence[PartitionRow]) -> dict:
    by_topic: dict[str, list[PartitionRow]] = {}
    for p in partitions:
        if p.lag is not None:
            by_topic.setdefault(p.topic, []).append(p)
    if not by_topic:
        return empty_figure(title="Lag per partition", message="No partition has a committed offset: no lag to draw.")
    figure = go.Figure(
        data=[go.Bar(name=topic, x=[f"{topic}-{p.partition}" for p in rows], y=[p.lag for p in rows],
                     hovertemplate="%{x}: lag %{y}<extra></extra>")
              for topic, rows in by_topic.items()],
        layout=base_layout(title="Lag per partition", x_title="Partition", y_title="Messages behind"))
    return figure_data(figure)
