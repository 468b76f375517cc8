"""The brokers page's chart: replicas and leaderships per broker, CMAK's skew at a glance."""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from console.brokers.selectors import BrokerRow
from console.charts import COLORS, base_layout, figure_data


def broker_load_chart(*, brokers: Sequence[BrokerRow]) -> dict:
    ids = [str(b.broker_id) for b in brokers]
    figure = go.Figure(
        data=[go.Bar(name="Replicas", x=ids, y=[b.partitions for b in brokers], marker_color=COLORS["replicas"]),
              go.Bar(name="Leaders", x=ids, y=[b.leaders for b in brokers], marker_color=COLORS["leaders"])],
        layout=base_layout(title="Replicas and leaders per broker", x_title="Broker", y_title="Partitions"))
    return figure_data(figure)
