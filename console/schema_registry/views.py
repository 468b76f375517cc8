"""The Schemas section of a cluster: subjects, a subject's versions with diffs, registering a
new version through the registry's compatibility preview, levels and modes, deletes.
Views validate, call one selector or service, and render; operators act, viewers read,
admins configure which registry the cluster uses."""
from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.accounts.roles import ADMIN, OPERATOR, VIEWER, has_role
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.schema_registry import selectors, services
from console.schema_registry.connection import registry_settings
from console.schema_registry.forms import DeleteForm, LevelForm, ModeForm, RegisterForm, RegistrySettingsForm
from console.web import form_error, page, unless_confirmed


def _subject_url(cluster_id: int, subject: str) -> str:
    return reverse("schema_registry:subject", args=[cluster_id, subject])


@page(VIEWER)
def schema_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    overview = selectors.subjects_overview(cluster=cluster)
    return render(request, "schema_registry/list.html", {
        "cluster": cluster, "overview": overview, "levels": selectors.LEVELS, "modes": selectors.MODES,
        "can_edit": has_role(request.user, OPERATOR), "can_configure": has_role(request.user, ADMIN)})


@page(ADMIN)
def registry_configure(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    row = registry_settings(cluster)
    initial = {"url": row.url, "auth": row.auth, "username": row.username, "secret_env": row.secret_env} \
        if row else {}
    form = RegistrySettingsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.registry_settings_update(cluster=cluster, actor=request.user, **form.cleaned_data)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, "Schema registry settings saved.")
            return redirect("schema_registry:list", cluster_id=cluster.pk)
    return render(request, "schema_registry/configure.html", {"cluster": cluster, "form": form,
                                                              "bundled": cluster.is_bundled and row is None},
                  status=400 if form.errors else 200)


@page(VIEWER)
def subject_detail(request, cluster_id: int, subject: str):
    cluster = cluster_get(cluster_id=cluster_id)
    version = _int(request.GET.get("version"))
    left, right = _int(request.GET.get("a")), _int(request.GET.get("b"))
    detail = selectors.subject_detail(cluster=cluster, subject=subject, version=version,
                                      diff=(left, right) if left and right else None)
    return render(request, "schema_registry/subject.html", {
        "cluster": cluster, "page": detail, "levels": selectors.LEVELS, "modes": selectors.MODES,
        "can_edit": has_role(request.user, OPERATOR)})


@page(OPERATOR)
def schema_register(request, cluster_id: int):
    """GET: the form (a subject's latest schema to start from); POST "preview": the registry's
    verbose compatibility verdict; POST "register": register it."""
    cluster = cluster_get(cluster_id=cluster_id)
    if request.method == "POST":
        form = RegisterForm(request.POST)
    else:
        form = RegisterForm(initial=_start_from(cluster, request.GET.get("subject", "")))
    preview = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        body = {"schema": data["schema"], "schemaType": data["schema_type"], "references": data["references"]}
        try:
            if request.POST.get("action") == "register":
                answer = services.schema_register(cluster=cluster, actor=request.user, subject=data["subject"],
                                                  schema_type=data["schema_type"], schema=data["schema"],
                                                  references=data["references"])
                messages.success(request, f"Registered under {data['subject']} with schema id {answer.get('id')}.")
                return redirect(_subject_url(cluster.pk, data["subject"]))
            preview = selectors.compatibility_preview(cluster=cluster, subject=data["subject"], body=body)
        except ConsoleError as exc:
            form_error(form, exc)
    return render(request, "schema_registry/register.html", {"cluster": cluster, "form": form, "preview": preview},
                  status=400 if form.errors else 200)


def _start_from(cluster, subject: str) -> dict:
    if not subject:
        return {}
    try:
        detail = selectors.subject_detail(cluster=cluster, subject=subject)
    except ConsoleError:
        return {"subject": subject}
    shown = detail.shown
    return {"subject": subject, "schema_type": shown.schema_type, "schema": shown.text,
            "references": json.dumps(shown.references) if shown.references else ""} if shown else {"subject": subject}


@page(OPERATOR)
@require_POST
def level_set(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = LevelForm(request.POST)
    subject = request.POST.get("subject") or None
    if form.is_valid():
        try:
            services.compatibility_set(cluster=cluster, actor=request.user, subject=form.cleaned_data["subject"] or None,
                                       level=form.cleaned_data["level"])
            messages.success(request, f"Compatibility of {subject or 'the registry'} set to "
                                      f"{form.cleaned_data['level']}.")
        except ConsoleError as exc:
            messages.error(request, f"Compatibility not changed: {exc}")
    else:
        messages.error(request, "Compatibility not changed: choose a level.")
    return _back_to(cluster.pk, subject)


@page(OPERATOR)
@require_POST
def mode_set(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ModeForm(request.POST)
    subject = request.POST.get("subject") or None
    if form.is_valid():
        try:
            services.mode_set(cluster=cluster, actor=request.user, subject=form.cleaned_data["subject"] or None,
                              mode=form.cleaned_data["mode"])
            messages.success(request, f"Mode of {subject or 'the registry'} set to {form.cleaned_data['mode']}.")
        except ConsoleError as exc:
            messages.error(request, f"Mode not changed: {exc}")
    else:
        messages.error(request, "Mode not changed: choose a mode.")
    return _back_to(cluster.pk, subject)


@page(OPERATOR)
@require_POST
def schema_delete(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = DeleteForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing deleted: the request named no valid subject or version.")
        return redirect("schema_registry:list", cluster_id=cluster.pk)
    subject, version, permanent = (form.cleaned_data[k] for k in ("subject", "version", "permanent"))
    what = f"version {version} of {subject}" if version else f"subject {subject}"
    how = ("Permanently delete" if permanent else "Soft delete")
    asked = unless_confirmed(request, action=f"{how} {what}", message=(
        f"{how} {what}? " + ("Its schema and version numbers are gone for good; producers that still use its id "
                             "fail to find it." if permanent else
                             "It stops being served as a version (consumers can still read its schema id) "
                             "until it is deleted permanently.")))
    if asked is not None:
        return asked
    try:
        if version:
            services.version_delete(cluster=cluster, actor=request.user, subject=subject, version=version,
                                    permanent=permanent)
        else:
            services.subject_delete(cluster=cluster, actor=request.user, subject=subject, permanent=permanent)
    except ConsoleError as exc:
        messages.error(request, f"{what.capitalize()} not deleted: {exc}")
        return redirect(_subject_url(cluster.pk, subject))
    messages.success(request, f"{how.split()[0]} deleted {what}." if permanent else f"Soft deleted {what}.")
    if version:
        return redirect(_subject_url(cluster.pk, subject))
    return redirect("schema_registry:list", cluster_id=cluster.pk)


def _int(value) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _back_to(cluster_id: int, subject: str | None):
    """After a level or mode change: the subject's page, or the list for the registry's default."""
    return redirect(_subject_url(cluster_id, subject) if subject else reverse("schema_registry:list", args=[cluster_id]))
