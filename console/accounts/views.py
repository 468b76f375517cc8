"""The audit log, for admins."""
from django.shortcuts import render

from console.accounts import selectors
from console.accounts.roles import ADMIN
from console.web import page


@page(ADMIN)
def audit_log(request):
    entries = selectors.audit_log_page(page=request.GET.get("page", 1), action=request.GET.get("action", ""))
    return render(request, "accounts/audit_log.html", {"entries": entries})
