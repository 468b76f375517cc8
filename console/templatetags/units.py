"""Template filters over console.formatting, built into every template (settings.TEMPLATES
"builtins"), so no template needs `{% load %}` for them.

    {{ ms|duration }}            "7 d"                 {{ seconds|duration_s }}    "1 h 55 min"
    {{ bytes|size }}             "1.9 MiB"             {{ bytes|size_rate }}       "1.9 MiB/s"
    {{ bytes|size_change }}      "+1.2 GiB", "-285 MiB"   {{ days|duration_days }}   "18 d"
    {{ n|count }}                "51,234"              {{ per_second|rate }}       "0.8/s"
    {{ x|percent }}              "12.3 %"
    {{ dt|when }}                <time> in local time with its UTC offset, UTC on hover, and "2 min ago"
                                 beside it (static/js/units.js turns it into the browser's time zone
                                 and writes the age: the HTML stays the same at every render)
    {{ dt|ago }}                 <time> saying "2 min ago", kept current by static/js/units.js (not
                                 for live fragments: its text changes with every render)
    {{ raw|config_value:name }}  <span title="raw value">7 d</span>, or the raw value when it has no unit
    {{ raw|config_with_unit:name }}  "168 h (7 d)"
    {% config_value_noted raw name "What applies without " "the override" missing="—" %}
                                 as config_value, the note joined from its parts and put before
                                 the raw value in the one title a hover shows
    {{ name|dotted_breaks }}     "topic.<wbr>config_set": a dotted name that may wrap after each dot
`dt` is an aware datetime or Kafka's epoch milliseconds.
"""
from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

from django import template
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from console import formatting

register = template.Library()



def _lenient(function):
    """A value that is not a number (a template's "—", a config's text) is shown as it is."""
    def show(value):
        if value is None or value == "":
            return formatting.NONE
        try:
            return function(value if isinstance(value, (int, float)) else float(value))
        except (TypeError, ValueError):
            return str(value)
    show.__name__ = function.__name__
    return show


for _name, _function in (("duration", formatting.duration), ("duration_s", formatting.duration_seconds),
                         ("size", formatting.size), ("size_rate", formatting.size_rate),
                         ("size_change", formatting.size_change),
                         ("duration_days", lambda days: formatting.duration(days * 86_400_000)),
                         ("count", formatting.count), ("rate", formatting.rate), ("percent", formatting.percent)):
    register.filter(_name, _lenient(_function))


def _moment(value) -> datetime | None:
    """An aware datetime, from a datetime or epoch milliseconds; None for nothing or nonsense."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value, dt_timezone.utc)
    try:
        return datetime.fromtimestamp(float(value) / 1000, tz=dt_timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


@register.filter
def when(value):
    """The age beside the time is written by static/js/units.js, not here: the same moment then
    renders the same HTML at every poll, so a live fragment is pushed only when it changed."""
    moment = _moment(value)
    if moment is None:
        return formatting.NONE
    iso = moment.isoformat()
    return format_html('<time datetime="{}" data-when title="{}">{}</time> <small class="ago">'
                       '<time datetime="{}" data-ago></time></small>',
                       iso, formatting.timestamp_utc(moment), formatting.timestamp(timezone.localtime(moment)), iso)


@register.filter
def dotted_breaks(value):
    parts = str(value).split(".")
    return format_html_join(mark_safe(".<wbr>"), "{}", ((part,) for part in parts))


@register.filter
def ago(value):
    moment = _moment(value)
    if moment is None:
        return formatting.NONE
    return format_html('<time datetime="{}" data-ago title="{}">{}</time>', moment.isoformat(),
                       formatting.timestamp_utc(moment), formatting.ago(moment))


@register.filter
def config_value(raw, name: str):
    human = formatting.config_human(name, raw)
    if raw is None:
        return "null"
    if human is None:
        return str(raw)
    return format_html('<span class="human" title="{}" data-raw="{}">{}</span>',
                       formatting.config_with_unit(name, raw), raw, human)


@register.simple_tag
def config_value_noted(raw, name: str, *note, missing: str = "null"):
    """A config value whose cell explains what it is: an inner title would hide an outer one, so
    the note and Kafka's raw value share the single title."""
    text = "".join(str(part) for part in note)
    human = formatting.config_human(name, raw)
    if raw is None or human is None:
        return format_html('<span title="{}">{}</span>', text, missing if raw is None else raw)
    return format_html('<span class="human" title="{}: {}" data-raw="{}">{}</span>',
                       text, formatting.config_with_unit(name, raw), raw, human)


@register.filter
def config_with_unit(raw, name: str) -> str:
    return formatting.config_with_unit(name, raw)
