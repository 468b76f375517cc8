"""Numbers on the share group pages as people read them: counts with thousands separators,
"—" for what the cluster does not tell."""
from django import template

register = template.Library()


@register.filter
def count(value) -> str:
    """51234 -> "51,234"; None -> "—"."""
    if value is None or value == "":
        return "—"
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)
