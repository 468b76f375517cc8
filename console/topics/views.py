"""Topic pages and the topic admin actions. Each view validates, calls one service or
selector, and renders; a ConsoleError from a service becomes a message on the form."""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console import formatting
from console.accounts.roles import OPERATOR, VIEWER
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.topics import selectors, services
from console.topics.charts import partition_messages_chart
from console.topics.key_sample import topic_key_sample
from console.topics.forms import (TopicConfigValueForm, TopicCreateForm, TopicDeleteForm, TopicDeleteRecordsForm,
                                  TopicPartitionsForm, list_filters)
from console.web import form_error, page, unless_confirmed


def elect_all_message(cluster) -> str:
    return (f"Run a preferred replica election for every topic of {cluster.name}? Each partition led by another "
            "replica than its first (preferred) one moves its leadership back to it; clients follow the new leaders.")


def config_diff(row, new: str | None) -> dict:
    """The change a save would make, raw and in a person's units ("259200000 → 172800000",
    "3 d → 2 d"); a reset's new value is the default, in the units of the config it comes from."""
    default_name = row.default_from or row.name
    return {"old": row.value, "new": new, "default": formatting.config_with_unit(default_name, row.default_value),
            "unchanged": new == row.value and row.is_override,
            "human_old": formatting.config_human(row.name, row.value),
            "human_new": (formatting.config_human(row.name, new) if new is not None
                          else formatting.config_human(default_name, row.default_value))}


@page(VIEWER)
def topic_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.topic_list(cluster=cluster, **list_filters(request))
    return render(request, "topics/list.html", {"cluster": cluster, "view": view,
                                                "status_filters": selectors.STATUS_FILTERS})


@page(VIEWER)
def topic_detail(request, cluster_id: int, name: str):
    """The topic's Overview tab: partitions, placement and stats (its groups and configs have
    tabs of their own, so this page asks for neither)."""
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.topic_detail(cluster=cluster, name=name, with_configs=False, with_groups=False)
    return render(request, "topics/detail.html", {
        "cluster": cluster, "view": view, "topic": name, "tab": "overview",
        "messages_chart": partition_messages_chart(partitions=view.partitions)})


@page(VIEWER)
def topic_consumers(request, cluster_id: int, name: str):
    """The Consumers tab: every group reading the topic, with its lag per partition."""
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.topic_consumers(cluster=cluster, name=name)
    return render(request, "topics/consumers.html", {"cluster": cluster, "view": view, "topic": name,
                                                     "tab": "consumers"})


@page(OPERATOR)
def topic_create(request, cluster_id: int):
    """The form, then a preview the cluster has checked (CreateTopics validate_only), then the
    creation; a value the cluster refuses is refused at the preview, the form kept filled in."""
    cluster = cluster_get(cluster_id=cluster_id)
    defaults = selectors.topic_create_defaults(cluster=cluster)
    form = TopicCreateForm(request.POST or None, defaults=defaults)
    preview = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        spec = {"name": data["name"], "partitions": data["partitions"],
                "replication_factor": data["replication_factor"], "configs": data["configs"]}
        try:
            if data["previewed"] == form.change_marker and request.POST.get("confirmed") == "yes":
                services.topic_create(cluster=cluster, actor=request.user, **spec)
                messages.success(request, f"Topic {data['name']} created.")
                return redirect("topics:detail", cluster_id=cluster.pk, name=data["name"])
            services.topic_create_check(cluster=cluster, **spec)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            preview = spec
            form = TopicCreateForm(initial={**request.POST.dict(), "previewed": form.change_marker}, defaults=defaults)
    return render(request, "topics/create.html", {"cluster": cluster, "form": form, "preview": preview},
                  status=400 if form.errors else 200)


@page(OPERATOR)
def topic_delete(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = TopicDeleteForm(request.POST or None, topic=name)
    if request.method == "POST" and form.is_valid():
        try:
            services.topic_delete(cluster=cluster, actor=request.user, name=name,
                                  confirmation=form.cleaned_data["confirmation"])
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Topic {name} deleted.")
            return redirect("topics:list", cluster_id=cluster.pk)
    # The groups that read the topic, as its Consumers tab lists them: who loses their input.
    readers = selectors.topic_consumers(cluster=cluster, name=name)
    return render(request, "topics/delete.html", {"cluster": cluster, "name": name, "form": form,
                                                  "readers": readers}, status=400 if form.errors else 200)


@page(OPERATOR)
def topic_delete_records(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = TopicDeleteRecordsForm(request.POST or None, topic=name)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            log_starts = services.topic_delete_records(
                cluster=cluster, actor=request.user, name=name, partition=data["partition"],
                before_offset=data["before_offset"], confirmation=data["confirmation"])
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Records of {name} deleted: partitions now start at "
                                      + ", ".join(f"{p}: {o}" for p, o in sorted(log_starts.items())) + ".")
            return redirect("topics:detail", cluster_id=cluster.pk, name=name)
    ranges = selectors.topic_ranges(cluster=cluster, name=name)
    return render(request, "topics/delete_records.html", {"cluster": cluster, "name": name, "form": form,
                                                          "ranges": ranges}, status=400 if form.errors else 200)


@page(VIEWER)
def topic_configs(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.topic_configs(cluster=cluster, name=name)
    return render(request, "topics/configs.html", {"cluster": cluster, "name": name, "view": view, "topic": name,
                                                   "tab": "configs"})


@page(OPERATOR)
def topic_config_edit(request, cluster_id: int, name: str, key: str):
    """One config: the form, then the diff (old -> new), then the save; the form stays filled
    in through every step and after a Kafka error."""
    cluster = cluster_get(cluster_id=cluster_id)
    row = selectors.topic_config(cluster=cluster, name=name, key=key)
    form = TopicConfigValueForm(request.POST or None, initial={"value": row.value or ""}, config=key,
                                can_reset=row.is_override)
    diff = None
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["previewed"] == form.change_marker and request.POST.get("confirmed") == "yes":
            try:
                change = services.topic_config_set(cluster=cluster, actor=request.user, name=name, key=key,
                                                   value=form.new_value)
            except ConsoleError as exc:
                form_error(form, exc)
            else:
                done = "reset to its default" if change.new is None else f"set to {change.new}"
                messages.success(request, f"{key} of {name} {done}.")
                return redirect("topics:configs", cluster_id=cluster.pk, name=name)
        else:
            try:      # the cluster's own check before the diff is shown (validate_only)
                services.topic_config_check(cluster=cluster, name=name, key=key, value=form.new_value)
            except ConsoleError as exc:
                form_error(form, exc)
        if not form.errors:
            diff = config_diff(row, form.new_value)
            form = TopicConfigValueForm(initial={**form.cleaned_data, "previewed": form.change_marker}, config=key,
                                        can_reset=row.is_override)
    return render(request, "topics/config_edit.html", {"cluster": cluster, "name": name, "row": row, "form": form,
                                                       "diff": diff}, status=400 if form.errors else 200)


@page(OPERATOR)
def topic_add_partitions(request, cluster_id: int, name: str):
    """The new total, then a preview the cluster has checked (CreatePartitions validate_only)
    that warns when the topic holds keyed records (their partition changes), then the change."""
    cluster = cluster_get(cluster_id=cluster_id)
    current = selectors.topic_partition_count(cluster=cluster, name=name)
    form = TopicPartitionsForm(request.POST or None, initial={"total_partitions": current + 1})
    preview = None
    if request.method == "POST" and form.is_valid():
        total = form.cleaned_data["total_partitions"]
        try:
            if form.cleaned_data["previewed"] == str(total) and request.POST.get("confirmed") == "yes":
                services.topic_add_partitions(cluster=cluster, actor=request.user, name=name, total_partitions=total)
                messages.success(request, f"{name} now has {total} partitions.")
                return redirect("topics:detail", cluster_id=cluster.pk, name=name)
            services.topic_add_partitions_check(cluster=cluster, name=name, total_partitions=total)
            keys = topic_key_sample(cluster=cluster, name=name)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            preview = {"total": total, "added": total - current, "keys": keys}
            form = TopicPartitionsForm(initial={"total_partitions": total, "previewed": str(total)})
    return render(request, "topics/partitions.html", {"cluster": cluster, "name": name, "topic": name,
                                                      "current": current, "form": form, "preview": preview},
                  status=400 if form.errors else 200)


@page(OPERATOR)
@require_POST
def topic_elect(request, cluster_id: int, name: str | None = None):
    """Preferred replica election for one topic (`name`) or for all topics (confirmed first)."""
    cluster = cluster_get(cluster_id=cluster_id)
    if name is None:
        asked = unless_confirmed(request, message=elect_all_message(cluster), action="Run the election for all topics")
        if asked is not None:
            return asked
    try:
        outcome = services.topic_elect_preferred_leaders(cluster=cluster, actor=request.user, name=name)
    except ConsoleError as exc:
        messages.error(request, f"Preferred replica election failed: {exc}")
    else:
        (messages.warning if outcome.result.failed else messages.success)(
            request, f"Preferred replica election: {outcome.summary()}")
    if name is None:
        return redirect("topics:list", cluster_id=cluster.pk)
    return redirect("topics:detail", cluster_id=cluster.pk, name=name)
