"""Consumer group pages and actions. Each view validates, calls one service or selector, and
renders; a ConsoleError from a service becomes a message on the form."""
from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse

from console.accounts.roles import OPERATOR, VIEWER
from console.analytics.selectors import STATUS_SNAPSHOTS, group_statuses
from console.clusters.selectors import cluster_get, topic_names
from console.errors import ConsoleError
from console.groups import selectors, services
from console.groups.charts import partition_lag_chart
from console.groups.forms import ConfirmGroupForm, ConsumerGroupConfigsForm, DeleteOffsetsForm, ResetForm, list_filters
from console.web import page


@page(VIEWER)
def group_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.group_list(cluster=cluster, **list_filters(request))
    # Burrow-style badges from the last analytics run (a Parquet read, no Spark, no Kafka).
    statuses = group_statuses(lake_url=settings.ANALYTICS_LAKE, cluster=cluster)
    return render(request, "groups/list.html", {"cluster": cluster, "view": view, "states": selectors.STATES,
                                                "sorts": selectors.SORTS, "types": selectors.TYPES,
                                                "statuses": statuses, "status_window": STATUS_SNAPSHOTS})


@page(VIEWER)
def group_detail(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.group_detail(cluster=cluster, group_id=group_id)
    configs = view.configs        # consumer-protocol groups (KIP-848) only
    return render(request, "groups/detail.html", {
        "cluster": cluster, "view": view, "lag_chart": partition_lag_chart(partitions=view.partitions),
        "reset_form": ResetForm(topics=_group_topics(view)), "configs": configs,
        "configs_form": ConsumerGroupConfigsForm(initial=ConsumerGroupConfigsForm.initial_from(configs.entries))
        if configs else None})


def _group_topics(view) -> list[str]:
    """The topics the group reads, for the reset form's topic picker."""
    return [t.topic for t in view.topics]


@page(OPERATOR)
def group_reset(request, cluster_id: int, group_id: str):
    """GET: the preview of the reset the form describes; POST: apply it."""
    cluster = cluster_get(cluster_id=cluster_id)
    form = ResetForm(request.POST if request.method == "POST" else (request.GET or None),
                     topics=topic_names(cluster=cluster) if request.method == "GET" else ())
    plan = None
    if form.is_bound and form.is_valid():
        try:
            if request.method == "POST":
                plan = services.group_reset_offsets(cluster=cluster, actor=request.user, group_id=group_id,
                                                    spec=form.spec())
                messages.success(request, f"Offsets of {len(plan.rows)} partition{pluralize(len(plan.rows))} reset "
                                          f"({plan.spec.summary()}).")
                return redirect("groups:detail", cluster_id=cluster.pk, group_id=group_id)
            plan = selectors.group_reset_preview(cluster=cluster, group_id=group_id, spec=form.spec())
        except ConsoleError as exc:
            form.add_error(None, str(exc))
    return render(request, "groups/reset.html", {"cluster": cluster, "group_id": group_id, "form": form,
                                                 "plan": plan}, status=400 if form.errors else 200)


@page(OPERATOR)
def group_delete_offsets(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = DeleteOffsetsForm(request.POST or None, group_id=group_id, initial={"topic": request.GET.get("topic", "")})
    if request.method == "POST" and form.is_valid():
        topic = form.cleaned_data["topic"]
        try:
            deleted = services.group_delete_offsets(cluster=cluster, actor=request.user, group_id=group_id,
                                                    topic=topic, confirmation=form.cleaned_data["confirmation"])
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Committed offsets of {deleted} partition{pluralize(deleted)} of {topic} deleted.")
            return redirect("groups:detail", cluster_id=cluster.pk, group_id=group_id)
    return render(request, "groups/delete_offsets.html", {"cluster": cluster, "group_id": group_id, "form": form},
                  status=400 if form.errors else 200)


@page(OPERATOR)
def group_delete(request, cluster_id: int, group_id: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ConfirmGroupForm(request.POST or None, group_id=group_id)
    if request.method == "POST" and form.is_valid():
        try:
            services.group_delete(cluster=cluster, actor=request.user, group_id=group_id,
                                  confirmation=form.cleaned_data["confirmation"])
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Group {group_id} deleted.")
            return redirect("groups:list", cluster_id=cluster.pk)
    refusal = None if form.errors else selectors.group_delete_refusal(cluster=cluster, group_id=group_id)
    return render(request, "groups/delete.html", {"cluster": cluster, "group_id": group_id, "form": form,
                                                  "refusal": refusal}, status=400 if form.errors else 200)


@page(OPERATOR)
def group_configs(request, cluster_id: int, group_id: str):
    """POST only (the form is on the group's page): a bad value re-renders this form alone."""
    return configs_post(request, cluster=cluster_get(cluster_id=cluster_id), group_id=group_id,
                        form=ConsumerGroupConfigsForm(request.POST), save=services.group_configs_alter,
                        kind="consumer group", detail="groups:detail", form_id="group-configs-form")


def configs_post(request, *, cluster, group_id: str, form, save, kind: str, detail: str, form_id: str):
    """The POST of a group's configs form (consumer and share groups): `save(cluster=, actor=,
    group_id=, values=)`, then back to the group's page (`detail`, a URL name); a bad value or
    Kafka's refusal re-renders the form alone. A GET goes to the group's page."""
    if request.method != "POST":
        return redirect(detail, cluster_id=cluster.pk, group_id=group_id)
    if form.is_valid():
        try:
            save(cluster=cluster, actor=request.user, group_id=group_id, values=form.values())
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Configs of {kind} {group_id} saved.")
            return redirect(detail, cluster_id=cluster.pk, group_id=group_id)
    return render(request, "groups/configs.html", {
        "cluster": cluster, "group_id": group_id, "form": form, "kind": kind, "form_id": form_id,
        "back_url": reverse(detail, args=[cluster.pk, group_id])}, status=400)
