"""The ACLs page (list, filters, sort, CSV export), its actions (add one, a wizard's set, a CSV
import: each previewed, then confirmed; delete one, confirmed), a principal's effective
permissions, and the Users page (SCRAM credentials). Reads need the viewer role; every change
needs the admin role and is audited (console.acls.services). Views validate, call one
selector or service, and render."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.accounts.roles import ADMIN, VIEWER, has_role
from console.acls import rules, selectors, services
from console.acls.forms import (AclBindingForm, AclFilterForm, CsvForm, PrincipalForm, ScramRemoveForm, ScramUserForm,
                                WizardForm)
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.web import form_error, page, unless_confirmed


def _filter_form(request) -> AclFilterForm:
    return AclFilterForm(request.GET)


@page(VIEWER)
def acl_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = _filter_form(request)
    data = form.cleaned_data if form.is_valid() else {}
    view = selectors.acl_list(cluster=cluster, filters=form.filters(), sort=data.get("sort") or "",
                              desc=bool(data.get("desc")), page=data.get("page") or 1)
    sort, desc = data.get("sort") or "principal", bool(data.get("desc"))
    return render(request, "acls/list.html", {"cluster": cluster, "view": view, "form": form,
                                              "can_edit": has_role(request.user, ADMIN),
                                              "columns": _columns(request, sort, desc),
                                              "page_query": _query(request, page=None)})


COLUMNS = (("principal", "Principal"), ("host", "Host"), ("resource_type", "Resource"), ("resource_name", "Name"),
           ("pattern_type", "Pattern"), ("operation", "Operation"), ("permission_type", "Permission"))


def _columns(request, sort: str, desc: bool) -> list[dict]:
    """Each column's header: its link sorts by it (again: the other way), filters kept."""
    return [{"key": key, "label": label, "active": key == sort,
             "aria": ("descending" if desc else "ascending") if key == sort else "",
             "url": "?" + _query(request, sort=key, desc="1" if key == sort and not desc else None, page=None)}
            for key, label in COLUMNS]


def _query(request, **changes) -> str:
    query = request.GET.copy()
    for name, value in changes.items():
        query.pop(name, None)
        if value is not None:
            query[name] = value
    return query.urlencode()


@page(VIEWER)
def acl_export(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    text = selectors.acl_export(cluster=cluster, filters=_filter_form(request).filters())
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="acls-{cluster.pk}.csv"'
    return response


@page(ADMIN)
def acl_add(request, cluster_id: int):
    """GET: the form; POST: its preview (nothing changes until the preview's button, acl_create)."""
    cluster = cluster_get(cluster_id=cluster_id)
    form = AclBindingForm(request.POST or None)
    return _form_or_preview(request, cluster, form, "acls/add.html", "form")


@page(ADMIN)
def acl_wizard(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = WizardForm(request.POST or None, initial={"kind": request.GET.get("kind", "consumer")})
    return _form_or_preview(request, cluster, form, "acls/wizard.html", "wizard")


@page(ADMIN)
def acl_import(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = CsvForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        return _preview(request, cluster, form.parsed.bindings, "import", errors=form.parsed.errors)
    return render(request, "acls/import.html", {"cluster": cluster, "form": form, "columns": rules.CSV_HEADER},
                  status=400 if form.errors else 200)


def _form_or_preview(request, cluster, form, template: str, source: str):
    if request.method == "POST" and form.is_valid():
        return _preview(request, cluster, form.bindings, source)
    return render(request, template, {"cluster": cluster, "form": form}, status=400 if form.errors else 200)


def _preview(request, cluster, bindings, source: str, errors=()):
    try:
        preview = selectors.acl_create_preview(cluster=cluster, bindings=bindings, errors=list(errors))
    except ConsoleError as exc:
        messages.error(request, f"The ACLs could not be read to preview the change: {exc}")
        return redirect("acls:list", cluster_id=cluster.pk)
    return render(request, "acls/preview.html", {"cluster": cluster, "preview": preview, "source": source})


@page(ADMIN)
@require_POST
def acl_create(request, cluster_id: int):
    """The preview's button: the new bindings as CSV, checked again here before anything changes."""
    cluster = cluster_get(cluster_id=cluster_id)
    parsed = rules.parse_csv(request.POST.get("acls_csv", "")[:4 * 1024 * 1024])
    source = request.POST.get("source") if request.POST.get("source") in ("form", "wizard", "import") else "form"
    if parsed.errors or not parsed.bindings:
        messages.error(request, "Nothing was created: the ACLs to create did not read back"
                                f"{' (line ' + str(parsed.errors[0][0]) + ': ' + parsed.errors[0][1] + ')' if parsed.errors else ''}.")
        return redirect("acls:list", cluster_id=cluster.pk)
    try:
        result = services.acl_create(cluster=cluster, actor=request.user, bindings=parsed.bindings, source=source)
    except ConsoleError as exc:
        code = f" (Kafka error: {exc.kafka_code})" if exc.kafka_code else ""
        messages.error(request, f"No ACL created: {exc}{code}")
    else:
        messages.success(request, f"{result.created} ACL{'s' if result.created != 1 else ''} created.")
        for described, why in result.refused[:10]:
            messages.error(request, f"Not created: {described}: {why}")
    return redirect("acls:list", cluster_id=cluster.pk)


@page(ADMIN)
@require_POST
def acl_delete(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    parsed = rules.parse_csv(request.POST.get("acls_csv", "")[:64 * 1024])
    if parsed.errors or not parsed.bindings:
        messages.error(request, "Nothing was deleted: the ACL named is not a valid binding.")
        return redirect("acls:list", cluster_id=cluster.pk)
    described = "; ".join(rules.describe(b) for b in parsed.bindings[:5])
    asked = unless_confirmed(request, action="Delete the ACL",
                             message=f"Delete {described} on {cluster.name}? Clients that relied on it are refused "
                                     "from then on.")
    if asked is not None:
        return asked
    try:
        removed = services.acl_delete(cluster=cluster, actor=request.user, bindings=parsed.bindings)
    except ConsoleError as exc:
        code = f" (Kafka error: {exc.kafka_code})" if exc.kafka_code else ""
        messages.error(request, f"Not deleted: {exc}{code}")
    else:
        messages.success(request, f"{removed} ACL{'s' if removed != 1 else ''} deleted: {described}.")
    return redirect("acls:list", cluster_id=cluster.pk)


@page(VIEWER)
def principal_view(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = PrincipalForm(request.GET or None)
    view = None
    if form.is_bound and form.is_valid():
        try:
            view = selectors.principal_permissions(cluster=cluster, principal=form.cleaned_data["principal"],
                                                   host=form.cleaned_data["host"])
        except ConsoleError as exc:
            form_error(form, exc)
    return render(request, "acls/principal.html", {"cluster": cluster, "form": form, "view": view},
                  status=400 if form.errors else 200)


@page(VIEWER)
def user_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    can_edit = has_role(request.user, ADMIN)
    return render(request, "acls/users.html", {"cluster": cluster, "view": selectors.scram_user_list(cluster=cluster),
                                               "can_edit": can_edit, "form": ScramUserForm() if can_edit else None})


@page(ADMIN)
@require_POST
def user_save(request, cluster_id: int):
    """Add a user or rotate a password: the form posts here; on a mistake the form comes back
    with its errors, the password field empty (it is never rendered)."""
    cluster = cluster_get(cluster_id=cluster_id)
    form = ScramUserForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.scram_user_upsert(cluster=cluster, actor=request.user, user=data["user"],
                                       mechanisms=data["mechanisms"], password=data["password"],
                                       iterations=data["iterations"])
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"SCRAM credentials of {data['user']} saved ({', '.join(data['mechanisms'])}).")
            return redirect("acls:users", cluster_id=cluster.pk)
    return render(request, "acls/users.html", {"cluster": cluster, "view": selectors.scram_user_list(cluster=cluster),
                                               "can_edit": True, "form": form}, status=400)


@page(ADMIN)
@require_POST
def user_remove(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ScramRemoveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "No user removed: name a user and at least one of its mechanisms.")
        return redirect("acls:users", cluster_id=cluster.pk)
    user, mechanisms = form.cleaned_data["user"], form.cleaned_data["mechanisms"]
    asked = unless_confirmed(request, action="Remove the credentials",
                             message=f"Remove the {', '.join(mechanisms)} credentials of {user} on {cluster.name}? "
                                     "Its clients can no longer log in with them.")
    if asked is not None:
        return asked
    try:
        services.scram_user_remove(cluster=cluster, actor=request.user, user=user, mechanisms=mechanisms)
    except ConsoleError as exc:
        code = f" (Kafka error: {exc.kafka_code})" if exc.kafka_code else ""
        messages.error(request, f"Not removed: {exc}{code}")
    else:
        messages.success(request, f"{', '.join(mechanisms)} credentials of {user} removed.")
    return redirect("acls:users", cluster_id=cluster.pk)
