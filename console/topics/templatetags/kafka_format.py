"""Template filters for Kafka values: durations in ms and byte limits as people read them."""
from django import template
from django.template.defaultfilters import filesizeformat

register = template.Library()

_UNITS = ((86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1000, "s"))


@register.filter
def duration_ms(value) -> str:
    """"604800000" -> "7 d"; "-1" -> "forever"; anything else is shown as it came."""
    try:
        ms = int(value)
    except (TypeError, ValueError):
        return "—" if value is None else str(value)
    if ms < 0:
        return "forever"
    for size, unit in _UNITS:
        if ms >= size and ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"


@register.filter
def byte_limit(value) -> str:
    """"-1" -> "no limit"; "1073741824" -> "1.0 GB"."""
    try:
        size = int(value)
    except (TypeError, ValueError):
        return "—" if value is None else str(value)
    return "no limit" if size < 0 else filesizeformat(size)
