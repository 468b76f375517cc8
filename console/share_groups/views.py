"""Share group pages and actions. Each view validates, calls one service or selector, and
renders; a ConsoleError from a service becomes a message on the form."""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize

from console.accounts.roles import OPERATOR, VIEWER
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.groups.views import configs_post
from console.share_groups import selectors, services
from console.share_groups.charts import share_lag_chart
from console.share_groups.forms import ConfirmGroupForm, DeleteOffsetsForm, ShareConfigsForm, ShareResetForm
from console.web import page


@page(VIEWER)
def share_group_detail(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.share_group_detail(cluster=cluster, group_id=group_id)
    resolution = request.GET.get("resolution", "5m")
    history = selectors.share_lag_history(cluster=cluster, group_id=group_id, resolution=resolution)
    return render(request, "share_groups/detail.html", {
        "cluster": cluster, "view": view, "reset_form": ShareResetForm(),
        "configs_form": ShareConfigsForm(initial=ShareConfigsForm.initial_from(view.configs)),
        "lag_chart": share_lag_chart(history=history), "resolution": resolution,
        "resolutions": selectors.RESOLUTIONS})


@page(OPERATOR)
def share_group_reset(request, cluster_id: int, group_id: str):
    """GET: the preview of the reset the form describes; POST: apply it."""
    cluster = cluster_get(cluster_id=cluster_id)
    form = ShareResetForm(request.POST if request.method == "POST" else (request.GET or None))
    plan = None
    if form.is_bound and form.is_valid():
        try:
            if request.method == "POST":
                plan = services.share_group_reset(cluster=cluster, actor=request.user, group_id=group_id,
                                                  spec=form.spec())
                messages.success(request, f"Start offsets of {len(plan.rows)} share partition{pluralize(len(plan.rows))} reset "
                                          f"({plan.spec.summary()}).")
                return redirect("share_groups:detail", cluster_id=cluster.pk, group_id=group_id)
            plan = selectors.share_reset_preview(cluster=cluster, group_id=group_id, spec=form.spec())
        except ConsoleError as exc:
            form.add_error(None, str(exc))
    return render(request, "share_groups/reset.html", {"cluster": cluster, "group_id": group_id, "form": form,
                                                       "plan": plan}, status=400 if form.errors else 200)


@page(OPERATOR)
def share_group_delete_offsets(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = DeleteOffsetsForm(request.POST or None, group_id=group_id, initial={"topic": request.GET.get("topic", "")})
    if request.method == "POST" and form.is_valid():
        topic = form.cleaned_data["topic"]
        try:
            services.share_group_delete_offsets(cluster=cluster, actor=request.user, group_id=group_id, topic=topic,
                                                confirmation=form.cleaned_data["confirmation"])
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Share offsets of {topic} deleted: the group reads it afresh next time.")
            return redirect("share_groups:detail", cluster_id=cluster.pk, group_id=group_id)
    return render(request, "share_groups/delete_offsets.html", {"cluster": cluster, "group_id": group_id,
                                                                "form": form}, status=400 if form.errors else 200)


@page(OPERATOR)
def share_group_delete(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ConfirmGroupForm(request.POST or None, group_id=group_id)
    if request.method == "POST" and form.is_valid():
        try:
            services.share_group_delete(cluster=cluster, actor=request.user, group_id=group_id,
                                        confirmation=form.cleaned_data["confirmation"])
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Share group {group_id} deleted.")
            return redirect("groups:list", cluster_id=cluster.pk)
    return render(request, "share_groups/delete.html", {"cluster": cluster, "group_id": group_id, "form": form},
                  status=400 if form.errors else 200)


@page(OPERATOR)
def share_group_configs(request, cluster_id: int, group_id: str):
    """POST only (the form is on the group's page): a bad value re-renders this form alone."""
    return configs_post(request, cluster=cluster_get(cluster_id=cluster_id), group_id=group_id,
                        form=ShareConfigsForm(request.POST), save=services.share_group_configs_alter,
                        kind="share group", detail="share_groups:detail", form_id="share-configs-form")
