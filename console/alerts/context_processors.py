from console.alerts.selectors import firing_counts


def firing_alerts(request) -> dict:
    """The navigation badge's first counts (then live.py pushes them): only on cluster pages."""
    cluster_id = getattr(getattr(request, "resolver_match", None), "kwargs", {}).get("cluster_id")
    if cluster_id is None or not getattr(request.user, "is_authenticated", False):
        return {}
    return {"alerts_firing": firing_counts(cluster_id=int(cluster_id))}
