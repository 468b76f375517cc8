"""Alert values in a person's units, and the rules' sparklines as inline SVG (no script)."""
from __future__ import annotations

import math

from django import template
from django.utils.html import format_html

from console import formatting

register = template.Library()
WIDTH, HEIGHT = 120, 24
NOT_GAINING = 1e12


# What a rule's count counts: "30 records", "2 partitions" (console.formatting.counted).
NOUNS = {"group_lag": "record", "under_replicated": "partition", "offline": "partition", "uncleanable": "partition",
         "broker_down": "broker"}


@register.filter
def rule_value(value, kind: str) -> str:
    """A rule's value as its kind reads: records, a duration, a share, a Burrow status, a count
    of partitions; units from console.formatting, as everywhere else on the console."""
    if value is None:
        return "–"
    if kind in ("group_time_lag", "catch_up", "hanging_transaction"):
        if value >= NOT_GAINING or math.isinf(value):
            return "not gaining"
        return formatting.duration_seconds(max(0.0, value))
    if kind == "log_dir_usage":
        return formatting.percent(value * 100)
    if kind == "group_status":
        return {0: "NOTFOUND", 1: "OK", 2: "WARN", 3: "ERR", 4: "STOP", 5: "STALL", 6: "REWIND"}.get(int(value), "–")
    if kind in NOUNS and value == int(value):
        return formatting.counted(int(value), NOUNS[kind])
    return formatting.count(value)


@register.filter
def sparkline(values) -> str:
    values = [v for v in values or () if v is not None]
    if len(values) < 2:
        return format_html('<svg class="sparkline" width="{}" height="{}" aria-label="no values yet"></svg>',
                           WIDTH, HEIGHT)
    top = max(values) or 1.0
    step = WIDTH / (len(values) - 1)
    points = " ".join(f"{i * step:.1f},{HEIGHT - 2 - (v / top) * (HEIGHT - 4):.1f}" for i, v in enumerate(values))
    return format_html('<svg class="sparkline" width="{}" height="{}" viewBox="0 0 {} {}" role="img" '
                       'aria-label="last {} values, peak {}"><polyline fill="none" stroke="currentColor" '
                       'stroke-width="1.5" points="{}"/></svg>', WIDTH, HEIGHT, WIDTH, HEIGHT, len(values),
                       f"{top:,.0f}", points)
