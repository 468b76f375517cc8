from console.clusters.models import Cluster


def nav_cluster(request) -> dict:
    """The cluster the URL is about, for the navigation of every page under /clusters/<id>/,
    error pages included (a 404 for a topic keeps the cluster's menu). One cheap query; none
    for a page that names no cluster, and an unknown id simply shows no cluster menu."""
    match = getattr(request, "resolver_match", None)
    cluster_id = match.kwargs.get("cluster_id") if match else None
    if cluster_id is None or not getattr(request, "user", None) or not request.user.is_authenticated:
        return {"nav_cluster": None}
    return {"nav_cluster": Cluster.objects.filter(pk=cluster_id).only("id", "name").first()}
