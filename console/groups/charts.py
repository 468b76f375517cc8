"""The group page's chart: lag per partition, one bar colour per topic, so the partition that
holds the group back shows at once. Partitions without a commit have no lag: they show as grey
bars of the records they hold (what a consumer starting from the earliest offset would read),
named so in the legend. Partitions whose offsets are unknown are left out; with nothing above
zero, the chart is a sentence instead of an empty frame."""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from console.charts import base_layout, empty_figure, figure_data
from console.groups.selectors import PartitionRow

NO_COMMIT_COLOR = "#9aa5b0"


def partition_lag_chart(*, partitions: Sequence[PartitionRow]) -> dict:
    by_topic: dict[str, list[PartitionRow]] = {}
    for p in partitions:
        if p.lag is not None:
            by_topic.setdefault(p.topic, []).append(p)
    uncommitted = [p for p in partitions if not p.has_commit and p.records is not None]
    if not by_topic and not uncommitted:
        return empty_figure(title="Lag per partition", message="No partition has a committed offset: no lag to draw.")
    # Bars all of height 0 draw an empty frame: a sentence says what it would have shown.
    if not any(p.lag for rows in by_topic.values() for p in rows) and not any(p.records for p in uncommitted):
        return empty_figure(title="Lag per partition", message=(
            "Lag 0 on every committed partition: nothing to draw." if by_topic else
            "No partition has a committed offset, and they hold no records: no lag to draw."))
    # A group that reads one topic (most do) names the topic once, on the axis: bars labelled
    # "0", "1", ... keep the plot tall on a phone, where "orders-11" stood on its side.
    topics = {p.topic for p in partitions}
    only = next(iter(topics)) if len(topics) == 1 else None

    def label(p: PartitionRow) -> str:
        return str(p.partition) if only else f"{p.topic}-{p.partition}"
    where = f"{only}-%{{x}}" if only else "%{x}"
    traces = [go.Bar(name=topic, x=[label(p) for p in rows], y=[p.lag for p in rows],
                     hovertemplate=where + ": lag %{y:,}<extra></extra>")
              for topic, rows in by_topic.items()]
    if uncommitted:
        traces.append(go.Bar(name="no commit (records held)", x=[label(p) for p in uncommitted],
                             y=[p.records for p in uncommitted], marker={"color": NO_COMMIT_COLOR, "opacity": 0.6},
                             hovertemplate=where + ": no commit, %{y:,} records<extra></extra>"))
    # Records, as the analytics page's lag charts say: a grey bar is records held, not records behind.
    layout = base_layout(title="Lag per partition", x_title=f"Partition of {only}" if only else "Partition",
                         y_title="Records")
    layout.barmode = "overlay"          # one bar per partition: its lag, or its records without a commit
    layout.xaxis.categoryorder = "array"
    layout.xaxis.categoryarray = [label(p) for p in partitions]
    return figure_data(go.Figure(data=traces, layout=layout))
