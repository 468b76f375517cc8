"""The share groups JSON API: the same selectors and services as the pages. Actions are POSTs
(form-encoded, CSRF-checked like every POST) and answer 400 with the form's errors."""
import dataclasses

from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.clusters.selectors import cluster_get
from console.errors import InvalidInput
from console.share_groups import selectors, services
from console.share_groups.forms import ConfirmGroupForm, DeleteOffsetsForm, ShareConfigsForm, ShareResetForm
from console.share_groups.reset import SharePlan
from console.web import json_api


@json_api(VIEWER)
def share_group_detail(request, cluster_id: int, group_id: str):
    view = selectors.share_group_detail(cluster=cluster_get(cluster_id=cluster_id), group_id=group_id)
    return {**_fields(view), "is_empty": view.is_empty}


@json_api(OPERATOR)
def share_group_reset_preview(request, cluster_id: int, group_id: str):
    """?target=earliest|latest|datetime|offset&scope=all|topic&topic=&datetime=2026-01-01T00:00Z&offset=N"""
    spec = _valid(ShareResetForm(request.GET)).spec()
    return _plan(selectors.share_reset_preview(cluster=cluster_get(cluster_id=cluster_id), group_id=group_id,
                                               spec=spec))


@json_api(OPERATOR)
@require_POST
def share_group_reset(request, cluster_id: int, group_id: str):
    spec = _valid(ShareResetForm(request.POST)).spec()
    return _plan(services.share_group_reset(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                            group_id=group_id, spec=spec))


@json_api(OPERATOR)
@require_POST
def share_group_delete_offsets(request, cluster_id: int, group_id: str):
    form = _valid(DeleteOffsetsForm(request.POST, group_id=group_id))
    services.share_group_delete_offsets(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                        group_id=group_id, topic=form.cleaned_data["topic"],
                                        confirmation=form.cleaned_data["confirmation"])
    return {"group_id": group_id, "topic": form.cleaned_data["topic"], "deleted": True}


@json_api(OPERATOR)
@require_POST
def share_group_delete(request, cluster_id: int, group_id: str):
    form = _valid(ConfirmGroupForm(request.POST, group_id=group_id))
    services.share_group_delete(cluster=cluster_get(cluster_id=cluster_id), actor=request.user, group_id=group_id,
                                confirmation=form.cleaned_data["confirmation"])
    return {"group_id": group_id, "deleted": True}


@json_api(OPERATOR)
@require_POST
def share_group_configs(request, cluster_id: int, group_id: str):
    form = _valid(ShareConfigsForm(request.POST))
    services.share_group_configs_alter(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                       group_id=group_id, values=form.values())
    return {"group_id": group_id, "configs": form.values()}


def _valid(form):
    if not form.is_valid():
        raise InvalidInput("; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    return form


def _plan(plan: SharePlan) -> dict:
    return {"group_id": plan.group_id, "state": plan.state, "target": plan.spec.summary(), "members": plan.members,
            "refusal": plan.refusal, "partitions": [{**_fields(r), "lag_after": r.lag_after} for r in plan.rows]}


def _fields(record) -> dict:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
