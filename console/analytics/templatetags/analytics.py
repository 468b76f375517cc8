from django import template

register = template.Library()


@register.filter
def status_of(statuses: dict, group_id: str) -> dict | None:
    """`{% with s=statuses|status_of:g.group_id %}`: a group's Burrow-style status row, if computed."""
    return statuses.get(group_id) if statuses else None
