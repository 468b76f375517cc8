"""Alert values in a person's units, and the rules' sparklines as inline SVG (no script)."""
from __future__ import annotations

import math

from django import template
from django.utils.html import format_html

register = template.Library()
WIDTH, HEIGHT = 120, 24
NOT_GAINING = 1e12


@register.filter
def rule_value(value, kind: str) -> str:
    """A rule's value as its kind reads: records, seconds, a share, a Burrow status, a count."""
    if value is None:
        return "–"
    if kind in ("group_time_lag", "catch_up", "hanging_transaction"):
        if value >= NOT_GAINING or math.isinf(value):
            return "not gaining"
        return _duration(value)
    if kind == "log_dir_usage":
        return f"{value * 100:.1f} %"
    if kind == "group_status":
        return {0: "NOTFOUND", 1: "OK", 2: "WARN", 3: "ERR", 4: "STOP", 5: "STALL", 6: "REWIND"}.get(int(value), "–")
    return f"{value:,.0f}"


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


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
