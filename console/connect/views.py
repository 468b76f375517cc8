"""The Connect section's pages: a Kafka cluster's Connect clusters and their connectors, one
connector in full, creating one (from the plugin's config definition or from JSON, checked
with Connect's config/validate first), connector actions through a confirmation, and
registering Connect clusters (admins). Views validate, call one selector or service, render."""
from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.accounts.roles import ADMIN, OPERATOR, VIEWER, has_role
from console.clusters.selectors import cluster_get
from console.connect import selectors, services
from console.connect.forms import (ConnectClusterForm, ConnectorConfigForm, ConnectorJsonForm, config_from_form,
                                   connector_form)
from console.connect.confirmations import CONFIRM, confirm_messages
from console.connect.masking import HIDDEN
from console.connect.services import ConnectorConfigInvalid
from console.errors import ConsoleError
from console.web import form_error, page, unless_confirmed



def _context(request, cluster, **extra) -> dict:
    return {"cluster": cluster, "can_act": has_role(request.user, OPERATOR),
            "can_admin": has_role(request.user, ADMIN), **extra}


@page(VIEWER)
def connect_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    return render(request, "connect/list.html", _context(request, cluster,
                                                         views=selectors.connect_list(cluster=cluster)))


@page(VIEWER)
def connect_cluster(request, cluster_id: int, connect_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    view = selectors.connect_overview(cluster=cluster, connect=connect,
                                      kafka_cluster_id=selectors.kafka_cluster_id(cluster))
    plugins = []
    if view.reachable:
        try:
            plugins = selectors.plugins(connect=connect)
        except ConsoleError:
            plugins = []
    return render(request, "connect/cluster.html", _context(request, cluster, view=view, plugins=plugins))


@page(VIEWER)
def connector_detail(request, cluster_id: int, connect_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    detail = selectors.connector_detail(connect=connect, name=name)
    confirm = confirm_messages(name=name)
    return render(request, "connect/connector.html", _context(request, cluster, connect=connect, detail=detail,
                                                              confirm=confirm))


@page(OPERATOR)
def connector_new(request, cluster_id: int, connect_id: int):
    """GET: pick a plugin, then its form. POST `submit=validate`: Connect's verdict per field;
    `submit=create`: validate again and create. `mode=json`: the connector as JSON instead."""
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    data = request.POST if request.method == "POST" else None
    plugin = (request.POST.get("plugin") or request.GET.get("plugin") or "").strip()
    mode = "json" if (request.POST.get("mode") or request.GET.get("mode")) == "json" else "form"
    plugin_list = selectors.plugins(connect=connect)
    context = _context(request, cluster, connect=connect, plugins=plugin_list, plugin=plugin, mode=mode,
                       json_form=ConnectorJsonForm(data if mode == "json" else None), form=None, groups=[],
                       checked=False, name=(request.POST.get("name") or ""))
    if mode == "form" and plugin:
        fields, context["plugin"] = selectors.plugin_fields(connect=connect, plugin=plugin, config=data)
        context["form"] = form = connector_form(fields, data if mode == "form" else None)
        context["groups"] = [(group, [form[d.name] for d in definitions]) for group, definitions in fields]
    if request.method != "POST":
        return render(request, "connect/new.html", context)
    if mode == "json":
        form = context["json_form"]
        if not form.is_valid():
            return _shown(request, "connect/new.html", context, status=400, keeps_hidden=False)
        name, config = form.connector_name, form.config
    else:
        form = context["form"]
        if form is None or not form.is_valid():
            return _shown(request, "connect/new.html", context, status=400, keeps_hidden=False)
        config = {k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
        config["connector.class"] = context["plugin"]
        name = (config.get("name") or "").strip()
    return _validate_or_create(request, context, form, connect, name, config)


def _validate_or_create(request, context, form, connect, name: str, config: dict):
    try:
        if request.POST.get("submit") == "validate":
            infos = services.connector_validate(connect=connect, config={**config, "name": name})
            errors = selectors.validation_errors(infos)
            _field_errors(form, errors)
            context["checked"] = not errors
            return _shown(request, "connect/new.html", context, status=400 if errors else 200, keeps_hidden=False)
        services.connector_create(actor=request.user, connect=connect, name=name, config=config)
    except ConnectorConfigInvalid as exc:
        _field_errors(form, exc.errors)
        form_error(form, exc)
        return _shown(request, "connect/new.html", context, status=400, keeps_hidden=False)
    except ConsoleError as exc:
        form_error(form, exc)
        return _shown(request, "connect/new.html", context, status=400, keeps_hidden=False)
    messages.success(request, f"Connector {name} created on {connect.name}.")
    return redirect("connect:connector", cluster_id=connect.cluster_id, connect_id=connect.pk, name=name)


def _shown(request, template: str, context: dict, *, status: int, keeps_hidden: bool):
    """A page rendered after a POST. A JSON form in it shows back what its operator typed, but
    not the secrets: those read `[hidden]`, as a password input comes back empty."""
    for form in (context.get("json_form"), context.get("form")):
        if form is not None and form.is_bound and "document" in form.fields:
            text, typed = selectors.json_document_shown(connect=context["connect"], text=form.data.get("document", ""))
            form.data = form.data.copy()
            form.data["document"] = text
            if typed:
                again = "type them again, or leave [hidden] to keep the current values" if keeps_hidden \
                    else "type them again"
                messages.warning(request, f"Secrets are not shown back ({', '.join(typed)}): {again}.")
    return render(request, template, context, status=status)


def _field_errors(form, errors: dict[str, list[str]]) -> None:
    for field, messages_ in errors.items():
        target = field if field in form.fields else None
        for message in messages_:
            form.add_error(target, message if target else f"{field}: {message}")


@page(OPERATOR)
def connector_config(request, cluster_id: int, connect_id: int, name: str):
    """The connector's whole config, secrets `[hidden]`: as JSON, or (`mode=form`) in its
    plugin's form filled with the current values. POST `submit=validate`: Connect's verdict;
    `submit=save`: validate again and PUT it."""
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    if (request.POST.get("mode") or request.GET.get("mode")) == "form":
        return _config_in_form(request, cluster, connect, name)
    if request.method != "POST":
        document = json.dumps(selectors.connector_config(connect=connect, name=name), indent=2)
        form = ConnectorConfigForm(initial={"document": document})
        return render(request, "connect/config.html", _context(request, cluster, connect=connect, name=name,
                                                               form=form, checked=False, mode="json"))
    form = ConnectorConfigForm(request.POST)
    context = _context(request, cluster, connect=connect, name=name, form=form, checked=False, mode="json")
    if not form.is_valid():
        return _shown(request, "connect/config.html", context, status=400, keeps_hidden=True)
    return _validate_or_save(request, context, form, connect, name, form.config)


def _config_in_form(request, cluster, connect, name: str):
    current = selectors.connector_config(connect=connect, name=name)
    fields, plugin = selectors.plugin_fields(connect=connect, plugin=current.get("connector.class", ""),
                                             config=request.POST if request.method == "POST" else current)
    form = connector_form(fields, request.POST if request.method == "POST" else None,
                          initial={k: v for k, v in current.items() if v != HIDDEN})
    context = _context(request, cluster, connect=connect, name=name, form=form, checked=False, mode="form",
                       plugin=plugin, groups=[(group, [form[d.name] for d in definitions])
                                              for group, definitions in fields])
    if request.method != "POST":
        return render(request, "connect/config.html", context)
    if not form.is_valid():
        return render(request, "connect/config.html", context, status=400)
    return _validate_or_save(request, context, form, connect, name, config_from_form(form, current))


def _validate_or_save(request, context, form, connect, name: str, config: dict[str, str]):
    try:
        if request.POST.get("submit") == "validate":
            errors = services.connector_config_validate(connect=connect, name=name, config=config)
            _field_errors(form, errors)
            context["checked"] = not errors
            return _shown(request, "connect/config.html", context, status=400 if errors else 200, keeps_hidden=True)
        services.connector_config_update(actor=request.user, connect=connect, name=name, config=config)
    except ConnectorConfigInvalid as exc:
        _field_errors(form, exc.errors)
        return _shown(request, "connect/config.html", context, status=400, keeps_hidden=True)
    except ConsoleError as exc:
        form_error(form, exc)
        return _shown(request, "connect/config.html", context, status=400, keeps_hidden=True)
    messages.success(request, f"The configuration of {name} is saved; Connect restarts the connector with it.")
    return redirect("connect:connector", cluster_id=connect.cluster_id, connect_id=connect.pk, name=name)


@page(OPERATOR)
@require_POST
def connector_action(request, cluster_id: int, connect_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    action = request.POST.get("action", "")
    task = request.POST.get("task")
    if action not in CONFIRM or (task is not None and (action != "restart" or not task.isdigit())):
        messages.error(request, "Unknown connector action.")
        return redirect("connect:connector", cluster_id=cluster.pk, connect_id=connect.pk, name=name)
    title, message = CONFIRM[action]
    if task is not None:
        title, message = "Restart the task", f"Restart task {task} of {name}?"
    asked = unless_confirmed(request, action=title, message=message.format(name=name))
    if asked is not None:
        return asked
    try:
        done = services.connector_action(actor=request.user, connect=connect, name=name, action=action,
                                         task=int(task) if task is not None else None)
    except ConsoleError as exc:
        code = f" ({exc.kafka_code})" if exc.kafka_code else ""
        messages.error(request, f"{title} of {name} failed: {exc}{code}")
    else:
        messages.success(request, done)
        if action == "delete":
            return redirect("connect:cluster", cluster_id=cluster.pk, connect_id=connect.pk)
    return redirect("connect:connector", cluster_id=cluster.pk, connect_id=connect.pk, name=name)


# --- Connect clusters (admins) --------------------------------------------------------------------

@page(ADMIN)
def connect_add(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ConnectClusterForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            connect = services.connect_cluster_add(actor=request.user, cluster=cluster, **form.cleaned_data)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Connect cluster {connect.name} added.")
            return redirect("connect:cluster", cluster_id=cluster.pk, connect_id=connect.pk)
    return render(request, "connect/cluster_form.html", _context(request, cluster, form=form, editing=None),
                  status=400 if form.errors else 200)


@page(ADMIN)
def connect_edit(request, cluster_id: int, connect_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    initial = {k: getattr(connect, k) for k in ("name", "url", "username", "password_env")}
    form = ConnectClusterForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.connect_cluster_update(actor=request.user, connect=connect, **form.cleaned_data)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Connect cluster {connect.name} saved.")
            return redirect("connect:cluster", cluster_id=cluster.pk, connect_id=connect.pk)
    return render(request, "connect/cluster_form.html", _context(request, cluster, form=form, editing=connect),
                  status=400 if form.errors else 200)


@page(ADMIN)
@require_POST
def connect_remove(request, cluster_id: int, connect_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=connect_id)
    asked = unless_confirmed(request, action="Forget the Connect cluster",
                             message=f"Forget the Connect cluster {connect.name} ({connect.url})? Its connectors keep "
                                     "running; the console stops showing them.")
    if asked is not None:
        return asked
    services.connect_cluster_remove(actor=request.user, connect=connect)
    messages.success(request, f"Connect cluster {connect.name} forgotten.")
    return redirect("connect:list", cluster_id=cluster.pk)
