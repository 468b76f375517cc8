"""The audit log, for admins: filtered by user, action, target and result, a page at a time,
each entry's details written as sentences (console/accounts/audit_text.py)."""
from django.shortcuts import render

from console.accounts import selectors
from console.accounts.roles import ADMIN
from console.web import json_api, page


def _filters(request) -> selectors.AuditFilters:
    get = request.GET
    return selectors.AuditFilters(actor=get.get("actor", "")[:150], action=get.get("action", "")[:64],
                                  target=get.get("target", "")[:300], result=get.get("result", "")[:8])


@page(ADMIN)
def audit_log(request):
    filters = _filters(request)
    entries = selectors.audit_log_page(page=request.GET.get("page", 1), filters=filters)
    return render(request, "accounts/audit_log.html", {"entries": entries, "filters": filters,
                                                       "choices": selectors.audit_filter_choices()})


@json_api(ADMIN)
def audit_log_api(request):
    """?actor=&action=&target=&result=&page=: each entry with its sentence and its raw details."""
    entries = selectors.audit_log_page(page=request.GET.get("page", 1), filters=_filters(request))
    return {"page": entries.number, "pages": entries.paginator.num_pages, "count": entries.paginator.count,
            "entries": [{"id": e.pk, "created_at": e.created_at, "actor": e.actor_name, "cluster": e.cluster_name,
                         "action": e.action, "target": e.target, "result": e.result, "sentence": e.sentence,
                         "details": e.details}
                        for e in entries]}
