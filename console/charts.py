"""Plotly figures for the pages.

Apps build figures with plotly's Python API (`graph_objects`) and hand `figure_data(fig)` to
the template's `json_script`; static/js/charts.js draws every element with a `data-chart`
attribute using the plotly.js that ships in the plotly package (see console.staticfiles).
The figures use no template, so the JSON carries only the data and a small layout.
"""
from __future__ import annotations

import json

import plotly.graph_objects as go

COLORS = {"replicas": "#4c78a8", "leaders": "#f58518", "messages": "#54a24b"}


def base_layout(*, title: str, x_title: str, y_title: str) -> go.Layout:
    return go.Layout(template="none", title={"text": title, "x": 0, "font": {"size": 14}}, height=260,
                     margin={"l": 56, "r": 16, "t": 40, "b": 44}, barmode="group",
                     legend={"orientation": "h", "y": 1.12, "x": 1, "xanchor": "right"},
                     xaxis={"title": {"text": x_title}, "type": "category"},
                     yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
                     font={"family": "system-ui, sans-serif", "size": 12})


def figure_data(figure: go.Figure) -> dict:
    """The figure as plain JSON data ({"data": [...], "layout": {...}}) for `json_script`."""
    return json.loads(figure.to_json())
