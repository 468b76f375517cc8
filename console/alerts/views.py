"""The Alerts page (rules, firing alerts, history, silences) and its actions. Reading needs
the viewer role; creating, changing, silencing and acknowledging need the operator role, are
POSTs (CSRF) and are audited by the services."""
from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER, has_role
from console.alerts import selectors, services
from console.alerts.forms import ReceiverForm, RuleForm, SilenceForm
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.web import form_error, page, unless_confirmed


@page(VIEWER)
def alert_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    return render(request, "alerts/list.html", {
        "cluster": cluster, "rules": selectors.rule_rows(cluster=cluster),
        "open_alerts": selectors.alerts_open(cluster=cluster), "history": selectors.history(cluster=cluster),
        "silences": selectors.silences_active(cluster=cluster), "receivers": selectors.receivers_all(),
        "notifications": selectors.notifications_recent(cluster=cluster),
        "can_edit": has_role(request.user, OPERATOR), "silence_form": SilenceForm()})


@page(OPERATOR)
def rule_edit(request, cluster_id: int, rule_id: int | None = None):
    cluster = cluster_get(cluster_id=cluster_id)
    rule = selectors.rule_get(cluster=cluster, rule_id=rule_id) if rule_id else None
    if request.method == "POST":
        form = RuleForm(request.POST)
        if form.is_valid():
            try:
                services.rule_save(actor=request.user, cluster=cluster, rule=rule, fields=form.rule_fields(),
                                   receivers=form.cleaned_data["receivers"])
                messages.success(request, f"Alert rule {form.cleaned_data['name']!r} saved.")
                return redirect("alerts:list", cluster_id=cluster.pk)
            except ConsoleError as exc:
                form_error(form, exc)
    elif rule is not None:
        form = RuleForm(initial={**{f: getattr(rule, f) for f in ("name", "kind", "target_type", "target",
                                                                   "threshold", "for_seconds", "enabled")},
                                 "statuses": [s for s in rule.statuses.split(",") if s],
                                 "receivers": list(rule.receivers.all())})
    else:
        form = RuleForm()
    return render(request, "alerts/rule_form.html", {"cluster": cluster, "form": form, "rule": rule},
                  status=400 if form.errors else 200)


@page(OPERATOR)
@require_POST
def rule_delete(request, cluster_id: int, rule_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    rule = selectors.rule_get(cluster=cluster, rule_id=rule_id)
    asked = unless_confirmed(request, message=f"Delete the alert rule {rule.name}, its alerts and their history?",
                             action="Delete the rule")
    if asked is not None:
        return asked
    services.rule_delete(actor=request.user, rule=rule)
    messages.success(request, f"Alert rule {rule.name!r} deleted.")
    return redirect("alerts:list", cluster_id=cluster.pk)


@page(OPERATOR)
def receiver_add(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ReceiverForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            receiver = services.receiver_save(actor=request.user, cluster=cluster, fields=form.cleaned_data)
            messages.success(request, f"Receiver {receiver.name!r} added.")
            return redirect("alerts:list", cluster_id=cluster.pk)
        except ConsoleError as exc:
            form_error(form, exc)
    return render(request, "alerts/receiver_form.html", {"cluster": cluster, "form": form},
                  status=400 if form.errors else 200)


@page(OPERATOR)
@require_POST
def receiver_delete(request, cluster_id: int, receiver_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    receiver = selectors.receiver_get(receiver_id=receiver_id)
    asked = unless_confirmed(request, message=f"Remove the receiver {receiver.name}? Rules that use it stop "
                                              "telling it.", action="Remove the receiver")
    if asked is not None:
        return asked
    services.receiver_delete(actor=request.user, cluster=cluster, receiver=receiver)
    messages.success(request, f"Receiver {receiver.name!r} removed.")
    return redirect("alerts:list", cluster_id=cluster.pk)


@page(OPERATOR)
@require_POST
def silence_add(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = SilenceForm(request.POST)
    if form.is_valid():
        rule = selectors.rule_get(cluster=cluster, rule_id=form.cleaned_data["rule"])
        try:
            services.silence_create(actor=request.user, rule=rule, subject=form.cleaned_data["subject"].strip(),
                                    until=form.until(), reason=form.cleaned_data["reason"])
            messages.success(request, f"Alert rule {rule.name!r} silenced for {form.cleaned_data['hours']:g} h.")
        except ConsoleError as exc:
            messages.error(request, str(exc))
    else:
        messages.error(request, "The silence was not added: " + "; ".join(
            f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    return redirect("alerts:list", cluster_id=cluster.pk)


@page(OPERATOR)
@require_POST
def silence_end(request, cluster_id: int, silence_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    services.silence_end(actor=request.user, silence=selectors.silence_get(cluster=cluster, silence_id=silence_id))
    messages.success(request, "Silence ended.")
    return redirect("alerts:list", cluster_id=cluster.pk)


@page(OPERATOR)
@require_POST
def alert_acknowledge(request, cluster_id: int, alert_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    alert = selectors.alert_get(cluster=cluster, alert_id=alert_id)
    try:
        services.alert_acknowledge(actor=request.user, alert=alert)
        messages.success(request, f"Alert {alert.rule.name} / {alert.subject} acknowledged.")
    except ConsoleError as exc:
        messages.error(request, str(exc))
    return redirect("alerts:list", cluster_id=cluster.pk)
