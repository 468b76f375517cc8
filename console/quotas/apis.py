"""The quotas JSON API: the same selectors and services as the page. The entity is given as
on the form: `user=alice`, `client_id=app`, `ip=10.0.0.1`, or `user_default=true` (and so on)
for a type's default. Actions are POSTs (form-encoded, CSRF-checked like every POST, operator
role) and answer 400 with the form's errors or the cluster's refusal."""
from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.clusters.selectors import cluster_get
from console.errors import InvalidInput
from console.quotas import selectors, services
from console.quotas.forms import QuotaRemoveForm, QuotaSetForm, list_filters
from console.quotas.rules import entity_label
from console.web import json_api


@json_api(VIEWER)
def quota_list(request, cluster_id: int):
    """?type=user|client-id|ip&q=search. Each entity as Kafka names it: its parts, a null name
    for a type's default, and its values with their units."""
    view = selectors.quota_list(cluster=cluster_get(cluster_id=cluster_id), **list_filters(request))
    if view.error:
        raise InvalidInput(view.error)
    return view


@json_api(OPERATOR)
def quota_preview(request, cluster_id: int):
    """?user=alice&key=controller_mutation_rate&value=10: the cluster checks the change with
    validate_only and changes nothing; the answer has the value now and after."""
    form = _valid(QuotaSetForm(request.GET))
    return selectors.quota_preview(cluster=cluster_get(cluster_id=cluster_id), entity=form.entity,
                                   key=form.cleaned_data["key"], value=form.cleaned_data["value"])


@json_api(OPERATOR)
@require_POST
def quota_set(request, cluster_id: int):
    form = _valid(QuotaSetForm(request.POST))
    key, value = form.cleaned_data["key"], form.cleaned_data["value"]
    old = services.quota_set(cluster=cluster_get(cluster_id=cluster_id), actor=request.user, entity=form.entity,
                             key=key, value=value)
    return {"entity": entity_label(form.entity), "key": key, "value": value, "old": old}


@json_api(OPERATOR)
@require_POST
def quota_remove(request, cluster_id: int):
    form = _valid(QuotaRemoveForm(request.POST))
    key = form.cleaned_data["key"]
    old = services.quota_remove(cluster=cluster_get(cluster_id=cluster_id), actor=request.user, entity=form.entity,
                                key=key)
    return {"entity": entity_label(form.entity), "key": key, "removed": old}


def _valid(form):
    if not form.is_valid():
        raise InvalidInput("; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    return form
