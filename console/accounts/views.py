"""The audit log, for admins: filtered by user, action, target and result, a page at a time,
each entry's details written as sentences (console/accounts/audit_text.py)."""
from django.shortcuts import render

from console.accounts import selectors
from console.accounts.roles import ADMIN
from console.web import page


@page(ADMIN)
def audit_log(request):
    filters = selectors.AuditFilters.from_query(request.GET)
    entries = selectors.audit_log_page(page=request.GET.get("page", 1), filters=filters)
    return render(request, "accounts/audit_log.html", {"entries": entries, "filters": filters,
                                                       "choices": selectors.audit_filter_choices()})
