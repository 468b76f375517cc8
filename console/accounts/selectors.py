"""Reads for accounts: the audit log, filtered and paginated."""
from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator

from console.accounts.audit_text import describe
from console.accounts.models import AuditLogEntry

PER_PAGE = 50


@dataclass(frozen=True)
class AuditFilters:
    actor: str = ""          # a user name, exactly
    action: str = ""         # an action, exactly ("topic.create"), or its entity ("topic")
    target: str = ""         # part of the target, any case
    result: str = ""         # ok or failed

    @classmethod
    def from_query(cls, get) -> "AuditFilters":
        """From a request's query string (bounded to the columns' lengths)."""
        return cls(actor=get.get("actor", "")[:150], action=get.get("action", "")[:64],
                   target=get.get("target", "")[:300], result=get.get("result", "")[:8])

    @property
    def query(self) -> str:
        """The filters as a query string for the pagination links."""
        from urllib.parse import urlencode
        return urlencode({k: v for k, v in vars(self).items() if v})


def audit_log_page(*, page: int | str = 1, per_page: int = PER_PAGE, filters: AuditFilters = AuditFilters()) -> Page:
    """The entries matching every filter, newest first, one page; each entry gets `.sentence`."""
    entries = AuditLogEntry.objects.all()
    if filters.actor:
        entries = entries.filter(actor_name=filters.actor)
    if filters.action:
        entries = entries.filter(action=filters.action) if "." in filters.action else \
            entries.filter(action__startswith=filters.action + ".")
    if filters.target:
        entries = entries.filter(target__icontains=filters.target)
    if filters.result in (AuditLogEntry.OK, AuditLogEntry.FAILED):
        entries = entries.filter(result=filters.result)
    found = Paginator(entries, per_page).get_page(page)
    for entry in found:
        entry.sentence = describe(action=entry.action, target=entry.target, details=entry.details or {},
                                  failed=entry.result == AuditLogEntry.FAILED)
    return found


def audit_filter_choices() -> dict[str, list[str]]:
    """The user names and actions the log holds, for the filter's drop-downs."""
    entries = AuditLogEntry.objects.order_by()
    return {"actors": sorted(set(entries.values_list("actor_name", flat=True).distinct())),
            "actions": sorted(set(entries.values_list("action", flat=True).distinct()))}
