"""Cluster pages: the list, and each cluster's overview."""
from django.shortcuts import redirect, render

from console.accounts.roles import VIEWER
from console.clusters import selectors
from console.web import page


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
    return render(request, "clusters/overview.html",
                  {"cluster": cluster, "overview": selectors.cluster_overview(cluster=cluster)})
