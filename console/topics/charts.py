"""The topic page's chart: messages per partition (high watermark minus log start offset), so
a skewed key distribution shows at once. Partitions without a leader are left out."""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from console import formatting
from console.charts import COLORS, base_layout, empty_figure, figure_data
from console.topics.selectors import PartitionRow


def partition_messages_chart(*, partitions: Sequence[PartitionRow]) -> dict:
    known = [p for p in partitions if p.high_watermark is not None and p.log_start_offset is not None]
    if not known:
        return empty_figure(title="Messages per partition", message="No partition has a leader: no offsets to draw.")
    figure = go.Figure(
        data=[go.Bar(name="Messages", x=[str(p.partition) for p in known],
                     y=[p.high_watermark - p.log_start_offset for p in known],
                     customdata=[formatting.size(p.size) for p in known], marker_color=COLORS["messages"],
                     hovertemplate="Partition %{x}: %{y:,} messages, %{customdata}<extra></extra>")],
        layout=base_layout(title="Messages per partition", x_title="Partition", y_title="Messages"))
    return figure_data(figure)
