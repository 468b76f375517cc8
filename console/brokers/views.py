"""Broker pages and the stop/start actions (bundled engine only)."""
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.brokers import selectors, services
from console.brokers.configs import broker_config_row, config_row
from console.brokers.forms import CLUSTER_DEFAULT, BrokerConfigValueForm
from console.brokers.charts import broker_load_chart
from console.clusters.selectors import cluster_get
from console.clusters.services import cluster_brokers_seen
from console.errors import ConsoleError
from console.web import form_error, page, unless_confirmed

COMMANDS = {"stop": (services.broker_stop, "stopped"), "start": (services.broker_start, "started")}


def stop_message(broker_id: int) -> str:
    return (f"Stop broker {broker_id}? A controlled shutdown moves its partition leaderships to other in-sync "
            "replicas first; partitions with no other replica in sync go offline until it is started again.")


@page(VIEWER)
def broker_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.broker_list(cluster=cluster)
    cluster_brokers_seen(cluster=cluster, brokers=view.seen_brokers)
    return render(request, "brokers/list.html",
                  {"cluster": cluster, "view": view, "load_chart": broker_load_chart(brokers=view.brokers)})


@page(VIEWER)
def broker_detail(request, cluster_id: int, broker_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.broker_detail(cluster=cluster, broker_id=broker_id)
    cluster_brokers_seen(cluster=cluster, brokers=view.seen_brokers)
    # Thousands of topics: the page shows them a page at a time (the JSON API has them all).
    topics = Paginator(view.broker.topic_partitions, settings.TOPICS_PER_PAGE).get_page(
        request.GET.get("page", 1))
    return render(request, "brokers/detail.html", {"cluster": cluster, "view": view, "topics": topics,
                                                   "configs": [config_row(c) for c in view.configs]})


@page(OPERATOR)
def broker_config_edit(request, cluster_id: int, broker_id: int, key: str):
    """One dynamic broker config: the form, a diff the cluster has checked (validate_only), the
    save; for this broker or for every broker (the cluster-wide default)."""
    cluster = cluster_get(cluster_id=cluster_id)
    row = broker_config_row(cluster=cluster, broker_id=broker_id, key=key)
    sensitive = row.is_sensitive
    form = BrokerConfigValueForm(request.POST or None, initial={"value": row.value or ""}, config=key,
                                 sensitive=sensitive, can_reset=row.is_dynamic)
    diff = None
    if request.method == "POST" and form.is_valid():
        change = {"cluster": cluster, "broker_id": broker_id, "key": key, "value": form.new_value,
                  "cluster_wide": form.cleaned_data["scope"] == CLUSTER_DEFAULT}
        try:
            # A password is checked and saved in one step: a preview would have to carry it back
            # in the page for the save.
            confirmed = form.cleaned_data["previewed"] == form.change_marker and request.POST.get("confirmed") == "yes"
            if sensitive:
                services.broker_config_check(**change)
            if sensitive or confirmed:
                services.broker_config_set(actor=request.user, **change)
                where = "every broker" if change["cluster_wide"] else f"broker {broker_id}"
                done = "override removed" if form.new_value is None else \
                    "set (the value is not shown)" if sensitive else f"set to {form.new_value}"
                messages.success(request, f"{key} of {where} {done}.")
                return redirect("brokers:detail", cluster_id=cluster.pk, broker_id=broker_id)
            services.broker_config_check(**change)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            diff = {"old": row.value, "new": form.new_value, "default": row.default_value,
                    "cluster_wide": change["cluster_wide"]}
            form = BrokerConfigValueForm(initial={**form.cleaned_data, "previewed": form.change_marker}, config=key,
                                         sensitive=sensitive, can_reset=row.is_dynamic)
    return render(request, "brokers/config_edit.html", {"cluster": cluster, "broker_id": broker_id, "row": row,
                                                        "form": form, "diff": diff},
                  status=400 if form.errors else 200)


@page(OPERATOR)
@require_POST
def broker_command(request, cluster_id: int, broker_id: int, action: str):
    cluster = cluster_get(cluster_id=cluster_id)
    command, done = COMMANDS[action]
    if action == "stop":
        asked = unless_confirmed(request, message=stop_message(broker_id), action=f"Stop broker {broker_id}")
        if asked is not None:
            return asked
    try:
        broker = command(cluster=cluster, actor=request.user, broker_id=broker_id)
    except ConsoleError as exc:
        messages.error(request, f"Broker {broker_id} was not {done}: {exc}")
    else:
        messages.success(request, f"Broker {broker.node_id} is {'running' if broker.running else 'stopped'}.")
    # Back to the page the button was on (the list or the broker's own page).
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("brokers:list", kwargs={"cluster_id": cluster_id})
    return redirect(target)
