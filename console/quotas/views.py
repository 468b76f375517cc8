"""The Quotas page and its actions: set a quota (form, then the cluster's validate-only preview,
then the change) and remove one (confirmed). Each view validates, calls one selector or
service, and renders; a ConsoleError from a service becomes a message on the form."""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER, has_role
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.quotas import selectors, services
from console.quotas.forms import QuotaRemoveForm, QuotaSetForm, QuotaWhoForm, list_filters
from console.quotas.rules import ENTITY_LABELS, KEYS, entity_label, value_display
from console.web import form_error, page, unless_confirmed


@page(VIEWER)
def quota_list(request, cluster_id: int):
    """The quotas set, and (with ?who=1) the quotas one client gets, in Kafka's order."""
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.quota_list(cluster=cluster, **list_filters(request))
    who = QuotaWhoForm(request.GET if "who" in request.GET else None)
    resolution = None
    if who.is_valid():
        try:
            resolution = selectors.quota_resolution(cluster=cluster, user=who.cleaned_data["who_user"],
                                                    client_id=who.cleaned_data["who_client_id"])
        except ConsoleError as exc:
            form_error(who, exc)
    return render(request, "quotas/list.html", {"cluster": cluster, "view": view, "entity_types": ENTITY_LABELS,
                                                "can_edit": has_role(request.user, OPERATOR), "who": who,
                                                "resolution": resolution})


@page(OPERATOR)
def quota_set(request, cluster_id: int):
    """GET: the form (filled in from the query when it names an entity and key); GET with a
    value: the preview, checked by the cluster with validate_only; POST (from the preview): set it."""
    cluster = cluster_get(cluster_id=cluster_id)
    if request.method == "POST":
        form = QuotaSetForm(request.POST)
    elif "value" in request.GET:
        form = QuotaSetForm(request.GET)
    else:
        form = QuotaSetForm(initial=request.GET.dict())
    preview = None
    if form.is_bound and form.is_valid():
        entity, key, value = form.entity, form.cleaned_data["key"], form.cleaned_data["value"]
        try:
            if request.method == "POST":
                old = services.quota_set(cluster=cluster, actor=request.user, entity=entity, key=key, value=value)
                was = "" if old is None else f" (was {value_display(key, old)})"
                messages.success(request, f"{key} of {entity_label(entity)} set to {value_display(key, value)}{was}.")
                return redirect("quotas:list", cluster_id=cluster.pk)
            preview = selectors.quota_preview(cluster=cluster, entity=entity, key=key, value=value)
        except ConsoleError as exc:
            form_error(form, exc)
    return render(request, "quotas/set.html", {"cluster": cluster, "form": form, "preview": preview,
                                               "keys": KEYS.values()}, status=400 if form.errors else 200)


@page(OPERATOR)
@require_POST
def quota_remove(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = QuotaRemoveForm(request.POST)
    if not form.is_valid():
        reasons = " ".join(e for errors in form.errors.values() for e in errors)
        messages.error(request, f"No quota removed: {reasons}")
        return redirect("quotas:list", cluster_id=cluster.pk)
    key, label = form.cleaned_data["key"], entity_label(form.entity)
    asked = unless_confirmed(request, action="Remove the quota",
                             message=f"Remove {key} of {label} on {cluster.name}? Its clients fall back to the next "
                                     "quota that matches them in Kafka's order, or to none.")
    if asked is not None:
        return asked
    try:
        old = services.quota_remove(cluster=cluster, actor=request.user, entity=form.entity, key=key)
    except ConsoleError as exc:
        messages.error(request, f"{key} of {label} not removed: {exc}")
    else:
        messages.success(request, f"{key} of {label} removed (it was {value_display(key, old)}).")
    return redirect("quotas:list", cluster_id=cluster.pk)
