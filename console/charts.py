"""Plotly figures for the pages.

Apps build figures with plotly's Python API (`graph_objects`) and hand `figure_data(fig)` to
the template's `json_script`; static/js/charts.js draws every element with a `data-chart`
attribute with plotly.js's basic bundle, at the version of the plotly package (console.staticfiles).
The figures use no template, so the JSON carries only the data and a small layout.

What every chart here does, whatever its data:
- no data: no axes at all (plotly would draw an empty date axis as "Jan–Nov 2000"), and a
  sentence saying why, in a box of a few lines rather than a chart's height (`empty_figure`);
- y axes always fit the data (autorange from zero), never a fixed range that cuts lines off;
- sizes and durations on an axis are in a person's units (`unit_axis`: "1 MiB", "2 h" at
  round values, from console.formatting), with the exact value on hover.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence

import plotly.graph_objects as go

from console import formatting

COLORS = {"replicas": "#4c78a8", "leaders": "#f58518", "messages": "#54a24b"}
MAX_TICKS = 5
EMPTY_HEIGHT = 96               # px: the title and a sentence, for a chart with no data

# Round steps per unit, in the unit's base (bytes, seconds): 1, 2, 5 x the unit's powers.
_BYTE_UNITS = (1, 1024, 1024 ** 2, 1024 ** 3, 1024 ** 4, 1024 ** 5)
_SECOND_UNITS = (1, 60, 3600, 86400)


def base_layout(*, title: str, x_title: str, y_title: str) -> go.Layout:
    return go.Layout(template="none", title={"text": title, "x": 0, "font": {"size": 14}}, height=260,
                     margin={"l": 64, "r": 16, "t": 40, "b": 44}, barmode="group",
                     legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},  # above the plot
                     # automargin: long or tilted tick labels push the axis title out, never under it
                     xaxis={"title": {"text": x_title}, "type": "category", "automargin": True},
                     yaxis={"title": {"text": y_title}, "rangemode": "tozero", "autorange": True, "automargin": True},
                     font={"family": "system-ui, sans-serif", "size": 12})


def empty_figure(*, title: str, message: str) -> dict:
    """A chart with nothing to draw: the title and `message`, no axes, EMPTY_HEIGHT high (a page
    of charts not yet collected is not a column of blank boxes)."""
    layout = base_layout(title=title, x_title="", y_title="")
    layout.height = EMPTY_HEIGHT
    layout.margin = {"l": 16, "r": 16, "t": 40, "b": 8}
    layout.xaxis = {"visible": False}
    layout.yaxis = {"visible": False}
    layout.annotations = [{"text": message, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5,
                           "y": 0.5, "font": {"size": 13}}]
    return figure_data(go.Figure(layout=layout))


def _nice_step(span: float, base: int) -> float:
    """A step of 1, 2 or 5 times a power of ten of `base` that cuts `span` into few ticks."""
    raw = span / MAX_TICKS / base
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power * base
    return 10 * power * base  # pragma: no cover - factor 10 always matches


def unit_ticks(low: float, high: float, *, unit: str) -> tuple[list[float], list[str]]:
    """Tick values at round sizes ("bytes") or durations ("seconds") between low and high,
    with their labels: 0, 512 KiB, 1 MiB, 1.5 MiB ... or 0, 30 min, 1 h ..."""
    high = max(high, low + 1)
    bases, label = ((_BYTE_UNITS, formatting.size) if unit == "bytes"
                    else (_SECOND_UNITS, lambda s: formatting.duration_seconds(s) if s else "0 s"))
    base = max((b for b in bases if b <= max(abs(low), abs(high))), default=1)
    step = _nice_step(high - low, base)
    first = math.floor(low / step) * step
    values = [first + i * step for i in range(int((high - first) / step) + 2) if first + i * step <= high + step / 2]
    return values, [label(v) for v in values]


def unit_axis(values: Sequence[float], *, unit: str, low: float | None = None) -> dict:
    """An axis over `values` whose ticks read in `unit`'s human form (see unit_ticks)."""
    known = [v for v in values if v is not None]
    top = max(known, default=0)
    bottom = min(known + [0]) if low is None else low
    ticks, labels = unit_ticks(bottom, top, unit=unit)
    return {"tickmode": "array", "tickvals": ticks, "ticktext": labels}


def histogram_figure(rows: Sequence[dict], *, x: str, width: float, title: str, x_title: str, unit: str,
                     empty: str) -> dict:
    """Counts per bin of `width` (rows: x = the bin's lower edge, "count"): bars that span their
    bins, with the real bin edges on the axis in `unit`'s human form."""
    if not rows:
        return empty_figure(title=title, message=empty)
    label: Callable[[float], str] = formatting.size if unit == "bytes" else formatting.duration_seconds
    lows = [r[x] for r in rows]
    trace = go.Bar(x=[low + width / 2 for low in lows], y=[r["count"] for r in rows], width=[width] * len(rows),
                   customdata=[f"{label(low)} – {label(low + width)}" for low in lows], name="records",
                   hovertemplate="%{customdata}: %{y} records<extra></extra>")
    layout = base_layout(title=title, x_title=x_title, y_title="Records")
    start, end = min(lows), max(lows) + width
    ticks, labels = unit_ticks(start, end, unit=unit)
    layout.xaxis = {"title": {"text": x_title}, "type": "linear", "range": [start, end], "tickmode": "array",
                    "tickvals": ticks, "ticktext": labels}
    layout.margin.r = 40      # room for the last edge's label, which plotly hides when it passes the chart's edge
    layout.bargap = 0.02
    return figure_data(go.Figure(data=[trace], layout=layout))


def figure_data(figure: go.Figure) -> dict:
    """The figure as plain JSON data ({"data": [...], "layout": {...}}) for `json_script`."""
    return json.loads(figure.to_json())
