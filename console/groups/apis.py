"""The groups JSON API: the same selectors and services as the pages. Actions are POSTs
(form-encoded, CSRF-checked like every POST) and answer 400 with the form's errors."""
import dataclasses

from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.clusters.selectors import cluster_get
from console.errors import InvalidInput
from console.groups import selectors, services
from console.groups.forms import ConfirmGroupForm, ConsumerGroupConfigsForm, DeleteOffsetsForm, ResetForm, list_filters
from console.groups.reset import ResetPlan
from console.web import json_api


@json_api(VIEWER)
def group_list(request, cluster_id: int):
    """?q=search&state=Stable|Empty|...&type=classic|consumer|share&topic=name&sort=id|lag&page=N"""
    return selectors.group_list(cluster=cluster_get(cluster_id=cluster_id), **list_filters(request))


@json_api(VIEWER)
def group_detail(request, cluster_id: int, group_id: str):
    """A consumer-protocol group (group_type "consumer") also has its configs, with their sources."""
    view = selectors.group_detail(cluster=cluster_get(cluster_id=cluster_id), group_id=group_id)
    return {**_fields(view), "is_empty": view.is_empty}


@json_api(OPERATOR)
def group_reset_preview(request, cluster_id: int, group_id: str):
    """?target=earliest|latest|datetime|offset|shift&scope=all|topic|partitions&topic=&partitions=0,2
    &datetime=2026-01-01T00:00Z&offset=N&shift=-N"""
    spec = _valid(ResetForm(request.GET)).spec()
    return _plan(selectors.group_reset_preview(cluster=cluster_get(cluster_id=cluster_id), group_id=group_id,
                                               spec=spec))


@json_api(OPERATOR)
@require_POST
def group_reset(request, cluster_id: int, group_id: str):
    spec = _valid(ResetForm(request.POST)).spec()
    return _plan(services.group_reset_offsets(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                              group_id=group_id, spec=spec))


@json_api(OPERATOR)
@require_POST
def group_delete_offsets(request, cluster_id: int, group_id: str):
    form = _valid(DeleteOffsetsForm(request.POST, group_id=group_id))
    deleted = services.group_delete_offsets(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                            group_id=group_id, topic=form.cleaned_data["topic"],
                                            confirmation=form.cleaned_data["confirmation"])
    return {"group_id": group_id, "topic": form.cleaned_data["topic"], "partitions": deleted}


@json_api(OPERATOR)
@require_POST
def group_delete(request, cluster_id: int, group_id: str):
    form = _valid(ConfirmGroupForm(request.POST, group_id=group_id))
    services.group_delete(cluster=cluster_get(cluster_id=cluster_id), actor=request.user, group_id=group_id,
                          confirmation=form.cleaned_data["confirmation"])
    return {"group_id": group_id, "deleted": True}


@json_api(OPERATOR)
@require_POST
def group_configs(request, cluster_id: int, group_id: str):
    """consumer_session_timeout_ms=50s&consumer_heartbeat_interval_ms=5000; an empty field resets
    that config to the brokers' value."""
    form = _valid(ConsumerGroupConfigsForm(request.POST))
    services.group_configs_alter(cluster=cluster_get(cluster_id=cluster_id), actor=request.user, group_id=group_id,
                                 values=form.values())
    return {"group_id": group_id, "configs": form.values()}


def _valid(form):
    if not form.is_valid():
        raise InvalidInput("; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    return form


def _plan(plan: ResetPlan) -> dict:
    return {"group_id": plan.group_id, "state": plan.state, "target": plan.spec.summary(), "members": plan.members,
            "refusal": plan.refusal,
            "partitions": [{**_fields(r), "lag_after": r.lag_after} for r in plan.rows]}


def _fields(record) -> dict:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
