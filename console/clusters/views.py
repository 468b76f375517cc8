"""Cluster pages: the list, each cluster's overview, and registering clusters (admins)."""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils import timezone

from console import live
from console.accounts.roles import ADMIN, VIEWER
from console.clusters import selectors, services
from console.clusters.forms import CLUSTER_FIELDS, ClusterAddForm, ClusterEditForm, ClusterRemoveForm
from console.errors import ConsoleError
from console.kafka_gateway import GatewayError
from console.web import form_error, page


@page(VIEWER)
def home(request):
    # One cluster is the usual case (the bundled engine): go straight to its overview.
    clusters = list(selectors.cluster_list()[:2])
    if len(clusters) == 1:
        return redirect("clusters:overview", cluster_id=clusters[0].pk)
    return redirect("clusters:list")


@page(VIEWER)
def cluster_list(request):
    return render(request, "clusters/list.html", {"clusters": selectors.cluster_list()})


@page(VIEWER)
def overview(request, cluster_id: int):
    cluster = selectors.cluster_get(cluster_id=cluster_id)
    try:
        overview = selectors.cluster_overview(cluster=cluster)
    except GatewayError as exc:
        # Still the overview page, with its live socket: it turns back into the overview by
        # itself once the cluster answers (the feed retries with backoff meanwhile).
        unreachable = live.unreachable_html(message=str(exc), since=timezone.now())
        return render(request, "clusters/overview.html", {"cluster": cluster, "unreachable": unreachable},
                      status=503)
    services.cluster_brokers_seen(cluster=cluster, brokers=overview.seen_brokers)
    return render(request, "clusters/overview.html", {"cluster": cluster, "overview": overview})


@page(ADMIN)
def cluster_add(request):
    form = ClusterAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            cluster = services.cluster_add(actor=request.user, **form.cleaned_data)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Cluster {cluster.name} registered.")
            return redirect("clusters:overview", cluster_id=cluster.pk)
    return render(request, "clusters/add.html", {"form": form}, status=400 if form.errors else 200)


@page(ADMIN)
def cluster_edit(request, cluster_id: int):
    cluster = selectors.cluster_get(cluster_id=cluster_id)
    form = ClusterEditForm(request.POST or None, initial={f: getattr(cluster, f) for f in CLUSTER_FIELDS})
    if request.method == "POST" and form.is_valid():
        try:
            services.cluster_update(actor=request.user, cluster=cluster, **form.cleaned_data)
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Cluster {cluster.name} saved.")
            return redirect("clusters:overview", cluster_id=cluster.pk)
    return render(request, "clusters/edit.html", {"cluster": cluster, "form": form},
                  status=400 if form.errors else 200)


@page(ADMIN)
def cluster_remove(request, cluster_id: int):
    cluster = selectors.cluster_get(cluster_id=cluster_id)
    form = ClusterRemoveForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.cluster_remove(actor=request.user, cluster=cluster,
                                    confirmation=form.cleaned_data["confirmation"])
        except ConsoleError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Cluster {cluster.name} removed from the console.")
            return redirect("clusters:list")
    return render(request, "clusters/remove.html", {"cluster": cluster, "form": form},
                  status=400 if form.errors else 200)
