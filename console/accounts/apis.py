"""The audit log's JSON twin, for admins."""
from console.accounts import selectors
from console.accounts.roles import ADMIN
from console.web import json_api


@json_api(ADMIN)
def audit_log(request):
    entries = selectors.audit_log_page(page=request.GET.get("page", 1), action=request.GET.get("action", ""))
    return {"page": entries.number, "pages": entries.paginator.num_pages,
            "entries": [{"id": e.pk, "created_at": e.created_at, "actor": e.actor_name, "cluster": e.cluster_name,
                         "action": e.action, "target": e.target, "result": e.result, "details": e.details}
                        for e in entries]}
