"""The Connect section as JSON: the same selectors and services as the pages. Actions are
POSTs (CSRF-checked like every POST; operator role) and answer 400 with Connect's message."""
from __future__ import annotations

import json

from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.clusters.selectors import cluster_get
from console.connect import selectors, services
from console.connect.forms import ConnectorConfigForm, ConnectorJsonForm
from console.connect.services import ConnectorConfigInvalid
from console.errors import InvalidInput
from console.web import json_api


@json_api(VIEWER)
def connect_list(request, cluster_id: int):
    return selectors.connect_list(cluster=cluster_get(cluster_id=cluster_id))


@json_api(VIEWER)
def connector_detail(request, cluster_id: int, connect_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    return selectors.connector_detail(connect=connect, name=name)


@json_api(OPERATOR)
@require_POST
def connector_create(request, cluster_id: int, connect_id: int):
    """Body: `{"name": ..., "config": {...}}` (JSON), or the form field `document` holding it."""
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    document = request.POST.get("document") if request.POST else request.body.decode(errors="replace")
    form = ConnectorJsonForm({"document": document or ""})
    if not form.is_valid():
        raise InvalidInput(" ".join(e for errors in form.errors.values() for e in errors))
    try:
        return services.connector_create(actor=request.user, connect=connect, name=form.connector_name,
                                         config=form.config)
    except ConnectorConfigInvalid as exc:
        raise InvalidInput(f"{exc} " + json.dumps(exc.errors)) from None


@json_api(OPERATOR)
@require_POST
def connector_action(request, cluster_id: int, connect_id: int, name: str, action: str):
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    task = request.POST.get("task")
    if task is not None and not task.isdigit():
        raise InvalidInput("task must be a task number.")
    done = services.connector_action(actor=request.user, connect=connect, name=name, action=action,
                                     task=int(task) if task is not None else None)
    return {"connector": name, "action": action, "result": done}


@json_api(OPERATOR)
@require_POST
def connector_config(request, cluster_id: int, connect_id: int, name: str):
    """Body: the connector's whole config as a JSON object (secrets `[hidden]` keep their value)."""
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    form = ConnectorConfigForm({"document": request.body.decode(errors="replace")})
    if not form.is_valid():
        raise InvalidInput(" ".join(e for errors in form.errors.values() for e in errors))
    try:
        services.connector_config_update(actor=request.user, connect=connect, name=name, config=form.config)
    except ConnectorConfigInvalid as exc:
        raise InvalidInput(f"{exc} " + json.dumps(exc.errors)) from None
    return selectors.connector_config(connect=connect, name=name)
