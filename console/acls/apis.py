"""The ACLs and Users JSON API: the same selectors and services as the pages. Changes are POSTs
(form-encoded, CSRF-checked like every POST, admin role): the ACLs as CSV in `acls_csv`
(console.acls.rules.CSV_HEADER's columns), a SCRAM user as the Users form's fields."""
from django.views.decorators.http import require_POST

from console.accounts.roles import ADMIN, VIEWER
from console.acls import rules, selectors, services
from console.acls.forms import AclFilterForm, PrincipalForm, ScramUserForm
from console.clusters.selectors import cluster_get
from console.errors import InvalidInput
from console.web import json_api


@json_api(VIEWER)
def acl_list(request, cluster_id: int):
    """?principal=&resource_type=2&name=&pattern_type=&operation=&permission_type=&sort=&desc=&page=
    (codes as Kafka's); a refusal (no authorizer, not authorized) is an `error` with Kafka's code."""
    form = AclFilterForm(request.GET)
    data = form.cleaned_data if form.is_valid() else {}
    view = selectors.acl_list(cluster=cluster_get(cluster_id=cluster_id), filters=form.filters(),
                              sort=data.get("sort") or "", desc=bool(data.get("desc")), page=data.get("page") or 1)
    if view.error:
        raise InvalidInput(f"{view.error} ({view.kafka_code})" if view.kafka_code else view.error)
    return view


def _bindings(request):
    parsed = rules.parse_csv(request.POST.get("acls_csv", "")[:4 * 1024 * 1024])
    if parsed.errors:
        raise InvalidInput("; ".join(f"line {line}: {why}" for line, why in parsed.errors[:20]))
    if not parsed.bindings:
        raise InvalidInput("acls_csv holds no ACL.")
    return parsed.bindings


@json_api(ADMIN)
@require_POST
def acl_create(request, cluster_id: int):
    result = services.acl_create(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                 bindings=_bindings(request), source="api")
    return {"created": result.created, "refused": [{"acl": acl, "error": why} for acl, why in result.refused]}


@json_api(ADMIN)
@require_POST
def acl_delete(request, cluster_id: int):
    return {"deleted": services.acl_delete(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                           bindings=_bindings(request))}


@json_api(VIEWER)
def principal_permissions(request, cluster_id: int):
    """?principal=User:alice&host=10.0.0.1: the topics, groups, cluster and transactional ids,
    each with the operations Kafka's rules allow."""
    form = PrincipalForm(request.GET)
    if not form.is_valid():
        raise InvalidInput("; ".join(f"{f}: {' '.join(e)}" for f, e in form.errors.items()))
    return selectors.principal_permissions(cluster=cluster_get(cluster_id=cluster_id),
                                           principal=form.cleaned_data["principal"], host=form.cleaned_data["host"])


@json_api(VIEWER)
def user_list(request, cluster_id: int):
    view = selectors.scram_user_list(cluster=cluster_get(cluster_id=cluster_id))
    if view.error:
        raise InvalidInput(f"{view.error} ({view.kafka_code})" if view.kafka_code else view.error)
    return view


@json_api(ADMIN)
@require_POST
def user_save(request, cluster_id: int):
    form = ScramUserForm(request.POST)
    if not form.is_valid():
        raise InvalidInput("; ".join(f"{f}: {' '.join(e)}" for f, e in form.errors.items()))
    data = form.cleaned_data
    services.scram_user_upsert(cluster=cluster_get(cluster_id=cluster_id), actor=request.user, user=data["user"],
                               mechanisms=data["mechanisms"], password=data["password"], iterations=data["iterations"])
    return {"user": data["user"], "mechanisms": data["mechanisms"], "iterations": data["iterations"]}
