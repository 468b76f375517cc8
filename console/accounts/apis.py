"""The audit log's JSON twin, for admins; who the caller is, for services that trust the console."""
from console.accounts import selectors
from console.accounts.roles import ADMIN, VIEWER, role_of
from console.web import json_api


@json_api(VIEWER)
def whoami(request):
    """The caller's name and role. The schema registry (engine/schema_registry/auth.py) asks it
    with a client's HTTP basic credentials, so the registry's users are the console's."""
    return {"username": request.user.get_username(), "role": role_of(request.user)}


@json_api(ADMIN)
def audit_log(request):
    """?actor=&action=&target=&result=&page=: each entry with its sentence and its raw details."""
    entries = selectors.audit_log_page(page=request.GET.get("page", 1),
                                       filters=selectors.AuditFilters.from_query(request.GET))
    return {"page": entries.number, "pages": entries.paginator.num_pages, "count": entries.paginator.count,
            "entries": [{"id": e.pk, "created_at": e.created_at, "actor": e.actor_name, "cluster": e.cluster_name,
                         "action": e.action, "target": e.target, "result": e.result, "sentence": e.sentence,
                         "details": e.details}
                        for e in entries]}
