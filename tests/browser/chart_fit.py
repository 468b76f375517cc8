"""Where a drawn chart's parts are (static/js/charts.js fits them to the chart's width): the
title, the legend, the x axis' title and the notes, as boxes in the page."""
from __future__ import annotations

PARTS = """id => {
  const chart = document.getElementById(id);
  const box = e => { const b = e.getBoundingClientRect(); return {left: b.left, top: b.top, right: b.right, bottom: b.bottom}; };
  const one = selector => { const e = chart.querySelector(selector); return e && e.getBBox().width ? box(e) : null; };
  return {chart: box(chart), title: one(".gtitle"), legend: one(".legend"), xtitle: one(".xtitle"),
          notes: [...chart.querySelectorAll(".annotation")].map(box), legendAt: chart.dataset.legend};
}"""


def overlap(a: dict | None, b: dict | None) -> bool:
    return bool(a and b) and a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] \
        and b["top"] < a["bottom"]


def chart_parts(page, chart_id: str) -> dict:
    return page.evaluate(PARTS, chart_id)


def assert_fits(page, chart_id: str) -> dict:
    """Nothing of the chart's text overlaps another part or passes the chart's edges."""
    parts = chart_parts(page, chart_id)
    chart = parts["chart"]
    texts = [p for p in (parts["title"], parts["legend"], parts["xtitle"], *parts["notes"]) if p]
    assert not overlap(parts["title"], parts["legend"]), (chart_id, "the legend covers the title", parts)
    assert not overlap(parts["xtitle"], parts["legend"]), (chart_id, "the legend covers the axis title", parts)
    for note in parts["notes"]:
        assert not overlap(parts["title"], note), (chart_id, "a note covers the title", parts)
    for text in texts:
        assert chart["left"] - 1 <= text["left"] and text["right"] <= chart["right"] + 1, (chart_id, "clipped", parts)
        assert chart["top"] - 1 <= text["top"] and text["bottom"] <= chart["bottom"] + 1, (chart_id, "clipped", parts)
    return parts
