"""Reads for accounts."""
from __future__ import annotations

from django.core.paginator import Page, Paginator

from console.accounts.models import AuditLogEntry


def audit_log_page(*, page: int = 1, per_page: int = 100, action: str = "") -> Page:
    entries = AuditLogEntry.objects.all()
    if action:
        entries = entries.filter(action=action)
    return Paginator(entries, per_page).get_page(page)
