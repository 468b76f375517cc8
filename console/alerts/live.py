"""The navigation badge: the count of firing alerts, pushed live (console.live) on every page."""
from __future__ import annotations

from django.template.loader import render_to_string

from console import live
from console.alerts.selectors import firing_counts

BADGE = "alerts.badge"


@live.fragment(BADGE)
def badge_fragment(*, cluster_id) -> str:
    return render_to_string("alerts/_badge.html", {"counts": firing_counts(cluster_id=int(cluster_id))})
